"""SeanNaren/minGPT's Lightning benchmark script (a GPT LightningModule, a custom learning-rate Callback
with the 1.x ``on_train_batch_end(..., dataloader_idx)`` signature, ``Trainer.add_argparse_args`` /
``from_argparse_args``, ``gradient_clip_val``, ``rank_zero_info``).

Source: SeanNaren/minGPT, benchmark.py, with mingpt/model.py and mingpt/lr_decay.py inlined
Commit: 2aa3c2cff14e37cdecb07aea4a02f0605974e706 (master, 2021-05-10; requirements.txt:
        pytorch-lightning>=1.2.1)
URL: https://github.com/SeanNaren/minGPT/blob/2aa3c2cff14e37cdecb07aea4a02f0605974e706/benchmark.py
Licence: MIT (stated in the repository's README; derived from karpathy/minGPT, MIT)

Edits (nothing else changed):
- One file: ``GPTConfig``/``GPT1Config``, ``CausalSelfAttention``, ``Block``, ``GPT`` (mingpt/model.py)
  and ``LearningRateDecayCallback`` (mingpt/lr_decay.py) inlined; ``from mingpt...`` imports removed.
- No GPU: ``CUDACallback`` (mingpt/callback.py; it calls ``torch.cuda.reset_peak_memory_stats`` and
  ``torch.cuda.synchronize``) is not inlined and is removed from ``callbacks``.
- Data: no ``wget`` of tinyshakespeare's input.txt and no ``CharDataset``: the train set is a
  TensorDataset of random token ids of the same shapes (x and y: ``block_size`` longs each, y being
  x shifted by one), 64 samples over a vocabulary of 65 (tinyshakespeare's character count), fixed
  generator; ``vocab_size``/``block_size``/``len(train_dataset)`` are taken from it, and the
  ``rank_zero_info`` line of ``CharDataset`` now reports this set.
  ``--num_workers`` default 4 -> 0.
- Sizes: ``--n_layer`` 22 -> 2, ``--n_head`` 16 -> 2, ``--n_embd`` 3072 -> 32, ``--block_size``
  128 -> 32 (``max_epochs=1`` as in the original).
- Harness: ``--out DIR`` and ``--devices N`` parsed by a separate parser (``parse_known_args``)
  before the program's parser, which gets the remaining arguments (so they cannot clash with the
  Trainer's own ``--devices``); ``Trainer.from_argparse_args`` gets ``default_root_dir=OUT`` and,
  for N=2, ``accelerator="ddp_cpu", num_processes=2``. The program seeds itself (``seed_everything(42)``).
"""
import argparse
import math
import logging
import os
from argparse import ArgumentParser

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F
import pytorch_lightning as pl
from pytorch_lightning import Trainer
from pytorch_lightning import seed_everything
from pytorch_lightning.utilities import rank_zero_info
from torch.utils.data import Dataset, DataLoader, TensorDataset

logger = logging.getLogger(__name__)


# ----------------------------------------------------------------------------- harness (added)
def _harness_args(argv=None):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--out", required=True)
    parser.add_argument("--devices", type=int, default=1, choices=(1, 2))
    return parser.parse_known_args(argv)


def _harness_trainer_kwargs(harness):
    kwargs = {"default_root_dir": harness.out}
    if harness.devices == 2:
        kwargs.update(accelerator="ddp_cpu", num_processes=2)
    return kwargs


# ----------------------------------------------------------------------------- mingpt/model.py
"""
GPT model:
- the initial stem consists of a combination of token encoding and a positional encoding
- the meat of it is a uniform sequence of Transformer blocks
    - each Transformer is a sequential combination of a 1-hidden-layer MLP block and a self-attention block
    - all blocks feed into a central residual pathway similar to resnets
- the final decoder is a linear projection into a vanilla Softmax classifier
"""


class GPTConfig:
    """ base GPT config, params common to all GPT versions """
    embd_pdrop = 0.1
    resid_pdrop = 0.1
    attn_pdrop = 0.1

    def __init__(self, vocab_size, block_size, **kwargs):
        self.vocab_size = vocab_size
        self.block_size = block_size
        for k,v in kwargs.items():
            setattr(self, k, v)

class GPT1Config(GPTConfig):
    """ GPT-1 like network roughly 125M params """
    n_layer = 12
    n_head = 12
    n_embd = 768

class CausalSelfAttention(nn.Module):
    """
    A vanilla multi-head masked self-attention layer with a projection at the end.
    I believe I could have just used torch.nn.MultiheadAttention but their documentation
    is all but absent and code ugly so I don't trust it, rolling my own here.
    """

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        # key, query, value projections for all heads
        self.key = nn.Linear(config.n_embd, config.n_embd)
        self.query = nn.Linear(config.n_embd, config.n_embd)
        self.value = nn.Linear(config.n_embd, config.n_embd)
        # regularization
        self.attn_drop = nn.Dropout(config.attn_pdrop)
        self.resid_drop = nn.Dropout(config.resid_pdrop)
        # output projection
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        # causal mask to ensure that attention is only applied to the left in the input sequence
        self.register_buffer("mask", torch.tril(torch.ones(config.block_size, config.block_size))
                                     .view(1, 1, config.block_size, config.block_size))
        self.n_head = config.n_head

    def forward(self, x, layer_past=None):
        B, T, C = x.size()

        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        k = self.key(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        q = self.query(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        v = self.value(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)

        # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:,:,:T,:T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        att = self.attn_drop(att)
        y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side

        # output projection
        y = self.resid_drop(self.proj(y))
        return y

class Block(nn.Module):
    """ an unassuming Transformer block """

    def __init__(self, config):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.ln2 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.mlp = nn.Sequential(
            nn.Linear(config.n_embd, 4 * config.n_embd),
            nn.GELU(),
            nn.Linear(4 * config.n_embd, config.n_embd),
            nn.Dropout(config.resid_pdrop),
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class GPT(pl.LightningModule):
    """  the full GPT language model, with a context size of block_size """
    def __init__(self,
                 vocab_size,
                 weight_decay=0.1,
                 betas=(0.9, 0.95),
                 learning_rate=3e-4,
                 n_embd=768,
                 block_size=128,
                 embd_pdrop=0.1,
                 n_layer=12,
                 n_head=4,
                 resid_pdrop=0.1,
                 attn_pdrop=0.1
                 ):
        super().__init__()
        # auto creates self.hparams from the method signature
        self.save_hyperparameters()

        # in lightning the "config" is hparams (for hyperparameters)
        self.config = self.hparams

        # input embedding stem
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Parameter(torch.zeros(1, block_size, n_embd))
        self.drop = nn.Dropout(embd_pdrop)
        # transformer
        self.blocks = nn.Sequential(*[Block(self.config) for _ in range(self.config.n_layer)])
        # decoder head
        self.ln_f = nn.LayerNorm(self.config.n_embd)
        self.head = nn.Linear(self.config.n_embd, self.config.vocab_size, bias=False)

        self.block_size = self.config.block_size
        self.apply(self._init_weights)

        logger.info("number of parameters: %e", sum(p.numel() for p in self.parameters()))

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)

    def get_block_size(self):
        return self.block_size

    def configure_optimizers(self):
        # create the optimizer
        no_decay = ["bias", "LayerNorm.weight"]
        params_decay = [p for n, p in self.named_parameters() if not any(nd in n for nd in no_decay)]
        params_nodecay = [p for n, p in self.named_parameters() if any(nd in n for nd in no_decay)]
        optim_groups = [
            {"params": params_decay, "weight_decay": self.hparams.weight_decay},
            {"params": params_nodecay, "weight_decay": 0.0},
        ]
        optimizer = torch.optim.AdamW(optim_groups, lr=self.hparams.learning_rate, betas=self.hparams.betas)
        return optimizer

    def forward(self, idx):
        b, t = idx.size()
        assert t <= self.block_size, "Cannot forward, model block size is exhausted."

        # forward the GPT model
        token_embeddings = self.tok_emb(idx) # each index maps to a (learnable) vector
        position_embeddings = self.pos_emb[:, :t, :] # each position maps to a (learnable) vector
        x = self.drop(token_embeddings + position_embeddings)
        x = self.blocks(x)
        x = self.ln_f(x)
        logits = self.head(x)
        return logits

    def training_step(self, batch, batch_idx):
        idx, targets = batch
        # same action as inference
        logits = self(idx)

        # if we are given some desired targets also calculate the loss
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

        self.log('train_loss', loss)
        return loss


# ----------------------------------------------------------------------------- mingpt/lr_decay.py
class LearningRateDecayCallback(pl.Callback):

    def __init__(self, learning_rate, warmup_tokens=375e6, final_tokens=260e9, lr_decay=True):
        super().__init__()
        self.learning_rate = learning_rate
        self.tokens = 0
        self.final_tokens = final_tokens
        self.lr_decay = lr_decay
        self.warmup_tokens = warmup_tokens

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        optimizer = trainer.optimizers[0]
        _, y = batch

        if self.lr_decay:
            self.tokens += (y >= 0).sum()  # number of tokens processed this step (i.e. label is not -100)
            if self.tokens < self.warmup_tokens:
                # linear warmup
                lr_mult = float(self.tokens) / float(max(1, self.warmup_tokens))
            else:
                # cosine learning rate decay
                progress = float(self.tokens - self.warmup_tokens) / float(
                    max(1, self.final_tokens - self.warmup_tokens))
                lr_mult = max(0.1, 0.5 * (1.0 + math.cos(math.pi * progress)))
            lr = self.learning_rate * lr_mult
            for param_group in optimizer.param_groups:
                param_group['lr'] = lr


# ----------------------------------------------------------------------------- benchmark.py
def random_char_dataset(block_size, vocab_size=65, n=64):
    """Edit: random token ids of CharDataset's shapes (x, y = chunk[:-1], chunk[1:])."""
    g = torch.Generator().manual_seed(0)
    chunks = torch.randint(0, vocab_size, (n, block_size + 1), generator=g)
    dataset = TensorDataset(chunks[:, :-1].contiguous(), chunks[:, 1:].contiguous())
    dataset.vocab_size = vocab_size
    dataset.block_size = block_size
    return dataset


if __name__ == '__main__':
    harness, argv = _harness_args()  # edit: harness flags parsed apart

    seed_everything(42)

    parser = ArgumentParser()
    parser = Trainer.add_argparse_args(parser)
    parser.add_argument('--n_layer', default=2, type=int)
    parser.add_argument('--n_head', default=2, type=int)
    parser.add_argument('--n_embd', default=32, type=int)
    parser.add_argument('--learning_rate', default=6e-4, type=float)
    parser.add_argument('--block_size', default=32, type=int)
    parser.add_argument('--batch_size', default=8, type=int)
    parser.add_argument('--num_workers', default=0, type=int)
    args = parser.parse_args(argv)

    # edit: no wget of input.txt and no CharDataset; random token ids of the same shapes
    train_dataset = random_char_dataset(args.block_size)
    rank_zero_info('data has %d samples, %d unique tokens.' % (len(train_dataset), train_dataset.vocab_size))
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size, num_workers=args.num_workers)

    model = GPT(
        vocab_size=train_dataset.vocab_size,
        block_size=train_dataset.block_size,
        n_layer=args.n_layer,
        n_head=args.n_head,
        n_embd=args.n_embd,
        learning_rate=args.learning_rate
    )

    lr_decay = LearningRateDecayCallback(
        learning_rate=6e-4,
        warmup_tokens=512 * 20,
        final_tokens=2 * len(train_dataset) * args.block_size
    )

    trainer = Trainer.from_argparse_args(
        args,
        max_epochs=1,
        gradient_clip_val=1.0,
        callbacks=[lr_decay],
        **_harness_trainer_kwargs(harness),
    )
    trainer.fit(model, train_loader)
