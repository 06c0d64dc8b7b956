"""AntixK/PyTorch-VAE's runner with the VanillaVAE (a yaml config, a LightningDataModule, a scheduler,
``on_validation_end`` sampling, ``LearningRateMonitor``/``ModelCheckpoint``, ``seed_everything``).

Source: AntixK/PyTorch-VAE, run.py, with experiment.py, dataset.py (``VAEDataset``),
        models/base.py, models/types_.py, models/vanilla_vae.py and configs/vae.yaml inlined
Commit: a6896b944c918dd7030e7d795a8c13e5c6345ec7 (2021-12-22, "Added support for latest pytorch
        lightning version"; requirements.txt pins pytorch-lightning==1.5.6)
URL: https://github.com/AntixK/PyTorch-VAE/blob/a6896b944c918dd7030e7d795a8c13e5c6345ec7/run.py
Licence: Apache-2.0 (Copyright Anand Krishnamoorthy Subramanian 2020)

Edits (nothing else changed):
- One file: ``BaseVAE``, ``VanillaVAE``, the ``types_`` aliases, ``VAEXperiment`` and ``VAEDataset``
  inlined from the same commit. ``from models import *`` becomes ``vae_models = {'VanillaVAE':
  VanillaVAE}`` (the other 20-odd models of the repo are not inlined). ``from utils import
  data_loader`` (unused by ``VAEXperiment``) removed. configs/vae.yaml is inlined as the string
  ``VAE_YAML``, used when ``--config`` is not given (its default was 'configs/vae.yaml').
- torchvision is not installed: its imports are removed; in ``VAEXperiment.sample_images`` the two
  ``vutils.save_image(...)`` calls are removed (the reconstructions and samples are still computed);
  in dataset.py ``MyDataset``, ``MyCelebA`` and ``OxfordPets`` (torchvision datasets / PIL loader)
  are left out.
- Data: ``VAEDataset.setup`` builds TensorDatasets of random tensors of the CelebA shapes instead of
  ``MyCelebA`` with transforms: images (3, patch_size, patch_size) in [0, 1), 40 binary attribute
  labels (the CelebA target); 128 train / 64 val samples, fixed generator.
- Sizes (in the inlined yaml): ``latent_dim`` 128 -> 16, ``hidden_dims: [8, 16, 32, 64, 512]`` added
  (the model's default is [32, 64, 128, 256, 512]; the decoder hard-codes 512 for the last one),
  ``num_workers`` 4 -> 0, ``max_epochs`` 100 -> 2.
- Harness: ``--out DIR`` and ``--devices N`` added to the parser. ``logging_params.save_dir`` is
  OUT; ``trainer_params.gpus`` ``[1]`` -> ``[]`` (CPU); the Trainer gets ``default_root_dir=OUT``;
  ``strategy=DDPPlugin(find_unused_parameters=False)`` is removed from the Trainer call (the import
  is kept) and, for N=2, ``accelerator="ddp_cpu", num_processes=2`` go into ``trainer_params``.
  The script body is put under ``if __name__ == "__main__":`` (ddp_cpu starts its processes by
  spawning, which re-imports this file). The program seeds itself (``seed_everything(1265, True)``).
"""
import os
import math
import yaml
import argparse
import numpy as np
from pathlib import Path
from abc import abstractmethod
from typing import List, Callable, Union, Any, TypeVar, Tuple, Optional, Sequence
import torch
from torch import nn
from torch import optim
from torch.nn import functional as F
import torch.backends.cudnn as cudnn
import pytorch_lightning as pl
from pytorch_lightning import Trainer
from pytorch_lightning import LightningDataModule
from pytorch_lightning.loggers import TensorBoardLogger
from pytorch_lightning.utilities.seed import seed_everything
from pytorch_lightning.callbacks import LearningRateMonitor, ModelCheckpoint
from pytorch_lightning.plugins import DDPPlugin
from torch.utils.data import DataLoader, Dataset, TensorDataset


# ----------------------------------------------------------------------------- configs/vae.yaml (sizes shrunk)
VAE_YAML = """
model_params:
  name: 'VanillaVAE'
  in_channels: 3
  latent_dim: 16
  hidden_dims: [8, 16, 32, 64, 512]


data_params:
  data_path: "Data/"
  train_batch_size: 64
  val_batch_size:  64
  patch_size: 64
  num_workers: 0


exp_params:
  LR: 0.005
  weight_decay: 0.0
  scheduler_gamma: 0.95
  kld_weight: 0.00025
  manual_seed: 1265

trainer_params:
  gpus: []
  max_epochs: 2

logging_params:
  save_dir: "logs/"
  name: "VanillaVAE"
"""


# ----------------------------------------------------------------------------- models/types_.py
# from torch import tensor as Tensor

Tensor = TypeVar('torch.tensor')


# ----------------------------------------------------------------------------- models/base.py
class BaseVAE(nn.Module):

    def __init__(self) -> None:
        super(BaseVAE, self).__init__()

    def encode(self, input: Tensor) -> List[Tensor]:
        raise NotImplementedError

    def decode(self, input: Tensor) -> Any:
        raise NotImplementedError

    def sample(self, batch_size:int, current_device: int, **kwargs) -> Tensor:
        raise NotImplementedError

    def generate(self, x: Tensor, **kwargs) -> Tensor:
        raise NotImplementedError

    @abstractmethod
    def forward(self, *inputs: Tensor) -> Tensor:
        pass

    @abstractmethod
    def loss_function(self, *inputs: Any, **kwargs) -> Tensor:
        pass


# ----------------------------------------------------------------------------- models/vanilla_vae.py
class VanillaVAE(BaseVAE):


    def __init__(self,
                 in_channels: int,
                 latent_dim: int,
                 hidden_dims: List = None,
                 **kwargs) -> None:
        super(VanillaVAE, self).__init__()

        self.latent_dim = latent_dim

        modules = []
        if hidden_dims is None:
            hidden_dims = [32, 64, 128, 256, 512]

        # Build Encoder
        for h_dim in hidden_dims:
            modules.append(
                nn.Sequential(
                    nn.Conv2d(in_channels, out_channels=h_dim,
                              kernel_size= 3, stride= 2, padding  = 1),
                    nn.BatchNorm2d(h_dim),
                    nn.LeakyReLU())
            )
            in_channels = h_dim

        self.encoder = nn.Sequential(*modules)
        self.fc_mu = nn.Linear(hidden_dims[-1]*4, latent_dim)
        self.fc_var = nn.Linear(hidden_dims[-1]*4, latent_dim)


        # Build Decoder
        modules = []

        self.decoder_input = nn.Linear(latent_dim, hidden_dims[-1] * 4)

        hidden_dims.reverse()

        for i in range(len(hidden_dims) - 1):
            modules.append(
                nn.Sequential(
                    nn.ConvTranspose2d(hidden_dims[i],
                                       hidden_dims[i + 1],
                                       kernel_size=3,
                                       stride = 2,
                                       padding=1,
                                       output_padding=1),
                    nn.BatchNorm2d(hidden_dims[i + 1]),
                    nn.LeakyReLU())
            )



        self.decoder = nn.Sequential(*modules)

        self.final_layer = nn.Sequential(
                            nn.ConvTranspose2d(hidden_dims[-1],
                                               hidden_dims[-1],
                                               kernel_size=3,
                                               stride=2,
                                               padding=1,
                                               output_padding=1),
                            nn.BatchNorm2d(hidden_dims[-1]),
                            nn.LeakyReLU(),
                            nn.Conv2d(hidden_dims[-1], out_channels= 3,
                                      kernel_size= 3, padding= 1),
                            nn.Tanh())

    def encode(self, input: Tensor) -> List[Tensor]:
        """
        Encodes the input by passing through the encoder network
        and returns the latent codes.
        :param input: (Tensor) Input tensor to encoder [N x C x H x W]
        :return: (Tensor) List of latent codes
        """
        result = self.encoder(input)
        result = torch.flatten(result, start_dim=1)

        # Split the result into mu and var components
        # of the latent Gaussian distribution
        mu = self.fc_mu(result)
        log_var = self.fc_var(result)

        return [mu, log_var]

    def decode(self, z: Tensor) -> Tensor:
        """
        Maps the given latent codes
        onto the image space.
        :param z: (Tensor) [B x D]
        :return: (Tensor) [B x C x H x W]
        """
        result = self.decoder_input(z)
        result = result.view(-1, 512, 2, 2)
        result = self.decoder(result)
        result = self.final_layer(result)
        return result

    def reparameterize(self, mu: Tensor, logvar: Tensor) -> Tensor:
        """
        Reparameterization trick to sample from N(mu, var) from
        N(0,1).
        :param mu: (Tensor) Mean of the latent Gaussian [B x D]
        :param logvar: (Tensor) Standard deviation of the latent Gaussian [B x D]
        :return: (Tensor) [B x D]
        """
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return eps * std + mu

    def forward(self, input: Tensor, **kwargs) -> List[Tensor]:
        mu, log_var = self.encode(input)
        z = self.reparameterize(mu, log_var)
        return  [self.decode(z), input, mu, log_var]

    def loss_function(self,
                      *args,
                      **kwargs) -> dict:
        """
        Computes the VAE loss function.
        KL(N(\mu, \sigma), N(0, 1)) = \log \frac{1}{\sigma} + \frac{\sigma^2 + \mu^2}{2} - \frac{1}{2}
        :param args:
        :param kwargs:
        :return:
        """
        recons = args[0]
        input = args[1]
        mu = args[2]
        log_var = args[3]

        kld_weight = kwargs['M_N'] # Account for the minibatch samples from the dataset
        recons_loss =F.mse_loss(recons, input)


        kld_loss = torch.mean(-0.5 * torch.sum(1 + log_var - mu ** 2 - log_var.exp(), dim = 1), dim = 0)

        loss = recons_loss + kld_weight * kld_loss
        return {'loss': loss, 'Reconstruction_Loss':recons_loss.detach(), 'KLD':-kld_loss.detach()}

    def sample(self,
               num_samples:int,
               current_device: int, **kwargs) -> Tensor:
        """
        Samples from the latent space and return the corresponding
        image space map.
        :param num_samples: (Int) Number of samples
        :param current_device: (Int) Device to run the model
        :return: (Tensor)
        """
        z = torch.randn(num_samples,
                        self.latent_dim)

        z = z.to(current_device)

        samples = self.decode(z)
        return samples

    def generate(self, x: Tensor, **kwargs) -> Tensor:
        """
        Given an input image x, returns the reconstructed image
        :param x: (Tensor) [B x C x H x W]
        :return: (Tensor) [B x C x H x W]
        """

        return self.forward(x)[0]


# models/__init__.py (edit: only the VanillaVAE entry)
vae_models = {'VanillaVAE': VanillaVAE}


# ----------------------------------------------------------------------------- experiment.py
class VAEXperiment(pl.LightningModule):

    def __init__(self,
                 vae_model: BaseVAE,
                 params: dict) -> None:
        super(VAEXperiment, self).__init__()

        self.model = vae_model
        self.params = params
        self.curr_device = None
        self.hold_graph = False
        try:
            self.hold_graph = self.params['retain_first_backpass']
        except:
            pass

    def forward(self, input: Tensor, **kwargs) -> Tensor:
        return self.model(input, **kwargs)

    def training_step(self, batch, batch_idx, optimizer_idx = 0):
        real_img, labels = batch
        self.curr_device = real_img.device

        results = self.forward(real_img, labels = labels)
        train_loss = self.model.loss_function(*results,
                                              M_N = self.params['kld_weight'], #al_img.shape[0]/ self.num_train_imgs,
                                              optimizer_idx=optimizer_idx,
                                              batch_idx = batch_idx)

        self.log_dict({key: val.item() for key, val in train_loss.items()}, sync_dist=True)

        return train_loss['loss']

    def validation_step(self, batch, batch_idx, optimizer_idx = 0):
        real_img, labels = batch
        self.curr_device = real_img.device

        results = self.forward(real_img, labels = labels)
        val_loss = self.model.loss_function(*results,
                                            M_N = 1.0, #real_img.shape[0]/ self.num_val_imgs,
                                            optimizer_idx = optimizer_idx,
                                            batch_idx = batch_idx)

        self.log_dict({f"val_{key}": val.item() for key, val in val_loss.items()}, sync_dist=True)


    def on_validation_end(self) -> None:
        self.sample_images()

    def sample_images(self):
        # Get sample reconstruction image
        test_input, test_label = next(iter(self.trainer.datamodule.test_dataloader()))
        test_input = test_input.to(self.curr_device)
        test_label = test_label.to(self.curr_device)

#         test_input, test_label = batch
        recons = self.model.generate(test_input, labels = test_label)
        # edit: vutils.save_image(recons.data, <log_dir>/Reconstructions/recons_<name>_Epoch_<epoch>.png) removed

        try:
            samples = self.model.sample(144,
                                        self.curr_device,
                                        labels = test_label)
            # edit: vutils.save_image(samples.cpu().data, <log_dir>/Samples/<name>_Epoch_<epoch>.png) removed
        except Warning:
            pass

    def configure_optimizers(self):

        optims = []
        scheds = []

        optimizer = optim.Adam(self.model.parameters(),
                               lr=self.params['LR'],
                               weight_decay=self.params['weight_decay'])
        optims.append(optimizer)
        # Check if more than 1 optimizer is required (Used for adversarial training)
        try:
            if self.params['LR_2'] is not None:
                optimizer2 = optim.Adam(getattr(self.model,self.params['submodel']).parameters(),
                                        lr=self.params['LR_2'])
                optims.append(optimizer2)
        except:
            pass

        try:
            if self.params['scheduler_gamma'] is not None:
                scheduler = optim.lr_scheduler.ExponentialLR(optims[0],
                                                             gamma = self.params['scheduler_gamma'])
                scheds.append(scheduler)

                # Check if another scheduler is required for the second optimizer
                try:
                    if self.params['scheduler_gamma_2'] is not None:
                        scheduler2 = optim.lr_scheduler.ExponentialLR(optims[1],
                                                                      gamma = self.params['scheduler_gamma_2'])
                        scheds.append(scheduler2)
                except:
                    pass
                return optims, scheds
        except:
            return optims


# ----------------------------------------------------------------------------- dataset.py
class VAEDataset(LightningDataModule):
    """
    PyTorch Lightning data module

    Args:
        data_dir: root directory of your dataset.
        train_batch_size: the batch size to use during training.
        val_batch_size: the batch size to use during validation.
        patch_size: the size of the crop to take from the original images.
        num_workers: the number of parallel workers to create to load data
            items (see PyTorch's Dataloader documentation for more details).
        pin_memory: whether prepared items should be loaded into pinned memory
            or not. This can improve performance on GPUs.
    """

    def __init__(
        self,
        data_path: str,
        train_batch_size: int = 8,
        val_batch_size: int = 8,
        patch_size: Union[int, Sequence[int]] = (256, 256),
        num_workers: int = 0,
        pin_memory: bool = False,
        **kwargs,
    ):
        super().__init__()

        self.data_dir = data_path
        self.train_batch_size = train_batch_size
        self.val_batch_size = val_batch_size
        self.patch_size = patch_size
        self.num_workers = num_workers
        self.pin_memory = pin_memory

    def setup(self, stage: Optional[str] = None) -> None:
#       =========================  CelebA Dataset  =========================
        # edit: random tensors of the CelebA shapes instead of MyCelebA(..., transform=...)
        g = torch.Generator().manual_seed(0)
        self.train_dataset = TensorDataset(
            torch.rand(128, 3, self.patch_size, self.patch_size, generator=g),
            torch.randint(0, 2, (128, 40), generator=g),
        )

        # Replace CelebA with your dataset
        self.val_dataset = TensorDataset(
            torch.rand(64, 3, self.patch_size, self.patch_size, generator=g),
            torch.randint(0, 2, (64, 40), generator=g),
        )
#       ===============================================================

    def train_dataloader(self) -> DataLoader:
        return DataLoader(
            self.train_dataset,
            batch_size=self.train_batch_size,
            num_workers=self.num_workers,
            shuffle=True,
            pin_memory=self.pin_memory,
        )

    def val_dataloader(self) -> Union[DataLoader, List[DataLoader]]:
        return DataLoader(
            self.val_dataset,
            batch_size=self.val_batch_size,
            num_workers=self.num_workers,
            shuffle=False,
            pin_memory=self.pin_memory,
        )

    def test_dataloader(self) -> Union[DataLoader, List[DataLoader]]:
        return DataLoader(
            self.val_dataset,
            batch_size=144,
            num_workers=self.num_workers,
            shuffle=True,
            pin_memory=self.pin_memory,
        )


# ----------------------------------------------------------------------------- run.py
if __name__ == "__main__":
    parser = argparse.ArgumentParser(description='Generic runner for VAE models')
    parser.add_argument('--config',  '-c',
                        dest="filename",
                        metavar='FILE',
                        help =  'path to the config file',
                        default=None)
    parser.add_argument('--out', required=True)  # edit: harness
    parser.add_argument('--devices', type=int, default=1, choices=(1, 2))  # edit: harness

    args = parser.parse_args()
    if args.filename is None:  # edit: the inlined configs/vae.yaml
        config = yaml.safe_load(VAE_YAML)
    else:
        with open(args.filename, 'r') as file:
            try:
                config = yaml.safe_load(file)
            except yaml.YAMLError as exc:
                print(exc)

    # edit: harness
    config['logging_params']['save_dir'] = args.out
    if args.devices == 2:
        config['trainer_params'].update(accelerator="ddp_cpu", num_processes=2)


    tb_logger =  TensorBoardLogger(save_dir=config['logging_params']['save_dir'],
                                   name=config['model_params']['name'],)

    # For reproducibility
    seed_everything(config['exp_params']['manual_seed'], True)

    model = vae_models[config['model_params']['name']](**config['model_params'])
    experiment = VAEXperiment(model,
                              config['exp_params'])

    data = VAEDataset(**config["data_params"], pin_memory=len(config['trainer_params']['gpus']) != 0)

    data.setup()
    runner = Trainer(logger=tb_logger,
                     callbacks=[
                         LearningRateMonitor(),
                         ModelCheckpoint(save_top_k=2,
                                         dirpath =os.path.join(tb_logger.log_dir , "checkpoints"),
                                         monitor= "val_loss",
                                         save_last= True),
                     ],
                     default_root_dir=args.out,  # edit: harness (strategy=DDPPlugin(...) removed)
                     **config['trainer_params'])


    Path(f"{tb_logger.log_dir}/Samples").mkdir(exist_ok=True, parents=True)
    Path(f"{tb_logger.log_dir}/Reconstructions").mkdir(exist_ok=True, parents=True)


    print(f"======= Training {config['model_params']['name']} =======")
    runner.fit(experiment, datamodule=data)
