"""The networks and input preparation of polis's PPO trainer (``polis.rl.ppo``), kept apart so
a checkpoint can be loaded to act without the trainer.

- ``Prep``: raw flat observations (``flatten=True``'s float32 vectors) -> network input:
  every feature normalised by a running mean and variance; map-like fields (``[C, H, W]``
  with H, W >= 8) cropped to their central cells and scaled by sign(x) log(1 + |x|) first.
- ``MlpNet``: a separate actor and critic, two tanh layers each.
- ``ConvNet``: a small CNN per map-like field, a tanh layer over the other features, one
  ReLU trunk feeding both heads.
- ``RecurrentNet`` (RecPPO, ``--algo recppo``): the MLP's or the CNN's features, then an
  LSTM cell whose state is carried from step to step of each row and zeroed where an episode
  starts; the actor and critic heads read the LSTM's output.
- ``CentralNet`` (MAPPO, ``--algo mappo``): a decentralised actor (``MlpNet``'s or
  ``ConvNet``'s, without a value head) and a centralised critic, an MLP over the global
  input ``global_input`` builds: every agent of the game's prepared observation (the
  agent's own first, then the others in id order) and, as AdaSociety's paper describes its
  MAPPO, the other agents' actions of the same step (one-hot).

Every network masks logits: a forbidden action gets -1e8, so it is never sampled and its
probability is 0 in the ratio and the entropy. Needs numpy and PyTorch.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


class RunningNorm:
    """Running mean and variance per feature (Chan et al.'s parallel update)."""

    def __init__(self, dim):
        self.mean = np.zeros(dim, np.float64)
        self.var = np.ones(dim, np.float64)
        self.count = 1e-4

    def update(self, x):
        m, v, n = x.mean(0), x.var(0), x.shape[0]
        delta, tot = m - self.mean, self.count + n
        self.mean += delta * n / tot
        self.var = (self.var * self.count + v * n + delta ** 2 * self.count * n / tot) / tot
        self.count = tot

    def __call__(self, x):
        return np.clip((x - self.mean) / np.sqrt(self.var + 1e-8), -10, 10).astype(np.float32)

    def state(self):
        return {"mean": self.mean.tolist(), "var": self.var.tolist(), "count": self.count}

    def load(self, s):
        mean, var = np.asarray(s["mean"], np.float64), np.asarray(s["var"], np.float64)
        if mean.shape != self.mean.shape or var.shape != self.var.shape:
            raise ValueError(f"normaliser of {mean.size} features, expected {self.mean.size}")
        self.mean, self.var, self.count = mean, var, float(s["count"])


class RewardNorm:
    """Rewards divided by the running std of each row's discounted return (as Gymnasium's
    NormalizeReward does), so the value loss has the same scale in every game."""

    def __init__(self, rows, gamma):
        self.ret = np.zeros(rows, np.float64)
        self.stats = RunningNorm(1)
        self.gamma = gamma

    def __call__(self, rew, done):
        self.ret = self.ret * self.gamma + rew
        self.stats.update(self.ret[:, None])
        self.ret[done] = 0.0
        return (rew / np.sqrt(self.stats.var[0] + 1e-8)).astype(np.float32)


def map_fields(obs_fields, parts):
    """The flat layout's map-like fields: (offset, C, H, W) of every [C, H, W] field with H
    and W at least 8. ``obs_fields``: objects with ``name`` and ``shape``; ``parts``: the
    layout's (name, offset, size) triples (``FlatLayout.parts``)."""
    shapes = {f.name: tuple(f.shape) for f in obs_fields}
    out = []
    for name, off, _ in parts:
        shape = shapes[name]
        if len(shape) == 3 and shape[1] >= 8 and shape[2] >= 8:
            out.append((off,) + tuple(shape))
    return out


class Prep:
    """Raw flat observations -> network input. Without map-like fields: every feature
    normalised by a running mean and variance. With them: the central ``crop`` x ``crop``
    cells of each (maps are egocentric, the agent at [H/2][W/2]; 0 keeps the whole map),
    scaled by sign(x) log(1 + |x|), first, then the other features, normalised."""

    def __init__(self, dim, maps, crop):
        self.in_dim, self.crop = dim, crop
        self.maps, parts, in_map, out = [], [], np.zeros(dim, bool), 0
        for off, c, h, w in maps:
            kh, kw = (min(crop, h), min(crop, w)) if crop else (h, w)
            r0, c0 = h // 2 - kh // 2, w // 2 - kw // 2
            cells = (off + np.arange(c)[:, None, None] * h * w
                     + (r0 + np.arange(kh))[None, :, None] * w + (c0 + np.arange(kw)))
            parts.append(cells.reshape(-1))
            in_map[off:off + c * h * w] = True
            self.maps.append((out, c, kh, kw))
            out += c * kh * kw
        self.n_map = out
        self.idx = np.concatenate(parts + [np.flatnonzero(~in_map)]) if maps else None
        self.dim = len(self.idx) if maps else dim
        self.norm = RunningNorm(self.dim - self.n_map)

    def __call__(self, x, update=True):
        return self.finish(self.select(x), update)

    def select(self, x):
        """The features the network reads (the crops, then the other features), raw."""
        return x if self.idx is None else x[:, self.idx]

    def finish(self, y, update=True):
        """``select``'s output -> network input (in place when maps are cropped): the maps
        scaled, the other features normalised (after updating the statistics with them)."""
        if self.idx is None:
            if update:
                self.norm.update(y)
            return self.norm(y)
        m, rest = y[:, :self.n_map], y[:, self.n_map:]
        np.copysign(np.log1p(np.abs(m)), m, out=m)
        if update:
            self.norm.update(rest)
        y[:, self.n_map:] = self.norm(rest)
        return y


def layer(i, o, std=np.sqrt(2), ks=None, stride=1):
    lin = nn.Linear(i, o) if ks is None else nn.Conv2d(i, o, ks, stride, padding=ks // 2)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


def _masked(logits, mask, action):
    logits = logits.masked_fill(mask == 0, -1e8)
    dist = torch.distributions.Categorical(logits=logits)
    if action is None:
        action = dist.sample()
    # entropy over the legal actions only (masked ones have probability 0)
    p = dist.probs
    ent = -(p * torch.log(p.clamp_min(1e-12))).sum(-1)
    return action, dist.log_prob(action), ent, logits


class MlpNet(nn.Module):
    """The shared actor and critic: two tanh layers each (no critic with ``critic=False``:
    MAPPO's actor)."""

    def __init__(self, obs_dim, n_actions, hidden, critic=True):
        super().__init__()
        if critic:
            self.critic = nn.Sequential(layer(obs_dim, hidden), nn.Tanh(),
                                        layer(hidden, hidden), nn.Tanh(), layer(hidden, 1, 1.0))
        self.actor = nn.Sequential(layer(obs_dim, hidden), nn.Tanh(),
                                   layer(hidden, hidden), nn.Tanh(),
                                   layer(hidden, n_actions, 0.01))

    def value(self, x):
        return self.critic(x).squeeze(-1)

    def logits(self, x):
        return self.actor(x)

    def act(self, x, mask, action=None):
        action, logp, ent, _ = _masked(self.actor(x), mask, action)
        return action, logp, ent, self.value(x)


class ConvFeatures(nn.Module):
    """The CNN trunk: each map-like field through two 3x3 convolutions (the second strided),
    the other features through a tanh layer, then a ReLU layer of ``hidden`` units. The input
    is ``Prep``'s."""

    def __init__(self, hidden, maps, dim):
        super().__init__()
        self.maps, self.n_map = maps, maps[-1][0] + int(np.prod(maps[-1][1:]))
        self.cnns = nn.ModuleList()
        feat = 0
        for _, c, h, w in maps:
            cnn = nn.Sequential(layer(c, 16, ks=3), nn.ReLU(),
                                layer(16, 32, ks=3, stride=2), nn.ReLU(), nn.Flatten())
            with torch.no_grad():
                feat += cnn(torch.zeros(1, c, h, w)).shape[1]
            self.cnns.append(cnn)
        rest = dim - self.n_map
        self.vec = nn.Sequential(layer(rest, 64), nn.Tanh()) if rest else None
        feat += 64 if rest else 0
        self.trunk = nn.Sequential(layer(feat, hidden), nn.ReLU())

    def features(self, x):
        parts = [cnn(x[:, off:off + c * h * w].reshape(-1, c, h, w).contiguous())
                 for cnn, (off, c, h, w) in zip(self.cnns, self.maps)]
        if self.vec is not None:
            parts.append(self.vec(x[:, self.n_map:]))
        return self.trunk(torch.cat(parts, 1))

    forward = features


class ConvNet(ConvFeatures):
    """One trunk (``ConvFeatures``) shared by actor and critic, then the two heads (no value
    head with ``critic=False``: MAPPO's actor)."""

    def __init__(self, n_actions, hidden, maps, dim, critic=True):
        super().__init__(hidden, maps, dim)
        self.pi = layer(hidden, n_actions, 0.01)
        if critic:
            self.v = layer(hidden, 1, 1.0)

    def value(self, x):
        return self.v(self.features(x)).squeeze(-1)

    def logits(self, x):
        return self.pi(self.features(x))

    def act(self, x, mask, action=None):
        h = self.features(x)
        action, logp, ent, _ = _masked(self.pi(h), mask, action)
        return action, logp, ent, self.v(h).squeeze(-1)


class RecurrentNet(nn.Module):
    """RecPPO's network: features (two tanh layers, or ``ConvFeatures``), an LSTM cell of
    ``hidden`` units, the actor and critic heads on its output. The state of a batch of rows
    is a pair (h, c) of [rows, hidden] tensors; ``first`` (float, 1 where a row's observation
    is the first of an episode) zeroes a row's state before the step reads it."""

    recurrent = True

    def __init__(self, n_actions, hidden, maps, dim):
        super().__init__()
        self.hidden = hidden
        if maps:
            self.body = ConvFeatures(hidden, maps, dim)
        else:
            self.body = nn.Sequential(layer(dim, hidden), nn.Tanh(),
                                      layer(hidden, hidden), nn.Tanh())
        self.lstm = nn.LSTMCell(hidden, hidden)
        for name, p in self.lstm.named_parameters():
            if "weight" in name:
                nn.init.orthogonal_(p, 1.0)
            else:
                nn.init.constant_(p, 0.0)
        self.pi = layer(hidden, n_actions, 0.01)
        self.v = layer(hidden, 1, 1.0)

    def initial(self, rows):
        return (torch.zeros(rows, self.hidden), torch.zeros(rows, self.hidden))

    def _cell(self, f, state, first):
        keep = (1.0 - first)[:, None]
        return self.lstm(f, (state[0] * keep, state[1] * keep))

    def step(self, x, state, first):
        """(LSTM output, new state) of one step of every row."""
        h, c = self._cell(self.body(x), state, first)
        return h, (h, c)

    def act(self, x, mask, state, first, action=None):
        out, state = self.step(x, state, first)
        action, logp, ent, _ = _masked(self.pi(out), mask, action)
        return action, logp, ent, self.v(out).squeeze(-1), state

    def logits(self, x, state, first):
        out, state = self.step(x, state, first)
        return self.pi(out), state

    def value(self, x, state, first):
        return self.v(self.step(x, state, first)[0]).squeeze(-1)

    def unroll(self, x, mask, action, first, state):
        """Truncated backpropagation through time over sequences: ``x`` [L, B, D], ``mask``
        [L, B, A], ``action`` and ``first`` [L, B], ``state`` the (h, c) before step 0 ->
        (log-probabilities, entropies, values), each [L * B] in step-major order."""
        L, B = x.shape[:2]
        f = self.body(x.reshape(L * B, -1)).reshape(L, B, -1)
        outs = []
        for t in range(L):
            h, c = self._cell(f[t], state, first[t])
            state = (h, c)
            outs.append(h)
        out = torch.cat(outs, 0)
        _, logp, ent, _ = _masked(self.pi(out), mask.reshape(L * B, -1), action.reshape(-1))
        return logp, ent, self.v(out).squeeze(-1)


class CentralNet(nn.Module):
    """MAPPO's network: ``actor`` (an ``MlpNet`` or ``ConvNet`` built without a value head)
    plays from the agent's own observation; ``critic``, two tanh layers, reads the global
    input (``global_input``) and is used in training only."""

    def __init__(self, actor, critic_in, hidden):
        super().__init__()
        self.actor = actor
        self.critic = nn.Sequential(layer(critic_in, hidden), nn.Tanh(),
                                    layer(hidden, hidden), nn.Tanh(), layer(hidden, 1, 1.0))
        self.critic_in = critic_in

    def logits(self, x):
        return self.actor.logits(x)

    def policy(self, x, mask, action=None):
        action, logp, ent, _ = _masked(self.actor.logits(x), mask, action)
        return action, logp, ent

    def value(self, g):
        return self.critic(g).squeeze(-1)

    def act(self, x, mask, g, action=None):
        action, logp, ent = self.policy(x, mask, action)
        return action, logp, ent, self.value(g)


def central_order(n):
    """[n, n] agent ids: row i is agent i first, then the others in id order."""
    return np.array([[i] + [j for j in range(n) if j != i] for i in range(n)], np.int64)


def critic_size(agents, dim, n_actions, with_actions):
    """The width of the central critic's input: ``agents`` observations of ``dim`` values and,
    with ``with_actions``, ``agents - 1`` one-hot actions."""
    return agents * dim + ((agents - 1) * n_actions if with_actions else 0)


def global_input(x, actions, agents, n_actions, with_actions, order=None):
    """The central critic's input of every row of a batch of games: ``x`` [games * agents,
    dim] prepared observations, rows game-major (game k's agent i is row k * agents + i);
    ``actions`` [games * agents] this step's action ids (unused without ``with_actions``).
    Row (k, i) gets agent i's observation, then the other agents' of game k in id order,
    then their actions one-hot in the same order: [rows, critic_size(...)] float32."""
    order = central_order(agents) if order is None else order
    rows, dim = x.shape
    games = rows // agents
    obs = x.reshape(games, agents, dim)[:, order, :].reshape(rows, agents * dim)
    if not with_actions or agents == 1:
        return np.ascontiguousarray(obs, np.float32)
    onehot = np.zeros((rows, n_actions), np.float32)
    onehot[np.arange(rows), np.asarray(actions, np.int64)] = 1.0
    acts = onehot.reshape(games, agents, n_actions)[:, order[:, 1:], :]
    return np.concatenate([obs, acts.reshape(rows, (agents - 1) * n_actions)], 1)


ARCHS = ("ff", "lstm", "central")


def build(encoder, obs_fields, parts, in_dim, n_actions, hidden, crop, arch="ff", agents=1,
          critic_actions=True):
    """(prep, net, encoder) for a layout: ``encoder`` "mlp", "conv" or "auto" (conv when the
    layout has a map-like field); ``arch`` "ff" (PPO: ``MlpNet`` or ``ConvNet``), "lstm"
    (RecPPO: ``RecurrentNet``) or "central" (MAPPO: ``CentralNet``, whose critic reads
    ``agents`` observations and, with ``critic_actions``, the others' actions). ValueError
    for "conv" without a map-like field or an unknown arch."""
    if arch not in ARCHS:
        raise ValueError(f"unknown network architecture {arch!r} ({', '.join(ARCHS)})")
    maps = map_fields(obs_fields, parts) if encoder != "mlp" else []
    if encoder == "conv" and not maps:
        raise ValueError("--encoder conv needs an observation field [C, H, W] with H, W >= 8; "
                         "the fields are " + ", ".join(f"{f.name} {list(f.shape)}"
                                                       for f in obs_fields))
    prep = Prep(in_dim, maps, crop)
    enc = "conv" if maps else "mlp"
    if arch == "lstm":
        return prep, RecurrentNet(n_actions, hidden, prep.maps, prep.dim), enc
    critic = arch == "ff"
    actor = (ConvNet(n_actions, hidden, prep.maps, prep.dim, critic=critic) if maps
             else MlpNet(prep.dim, n_actions, hidden, critic=critic))
    if arch == "central":
        size = critic_size(agents, prep.dim, n_actions, critic_actions)
        return prep, CentralNet(actor, size, hidden), enc
    return prep, actor, enc
