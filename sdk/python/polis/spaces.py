"""Spaces: gymnasium's when gymnasium is importable, otherwise these compatible classes.

The classes here follow the gymnasium names and signatures a multi-agent training loop
uses, so code written against gymnasium spaces runs on them unchanged:

- ``Discrete(n, seed=None, start=0)``: ``n``, ``start``, ``shape == ()``, ``dtype`` (int64),
  ``sample(mask=None, probability=None)``, ``contains(x)`` / ``x in space``, ``seed(seed)``;
- ``Box(low, high, shape, dtype, seed=None)``: ``low``, ``high``, ``shape``, ``dtype``,
  ``sample()``, ``contains(x)``, ``seed(seed)``;
- ``Dict(spaces, seed=None)``: mapping access, ``sample(mask=None)``, ``contains``, ``seed``.

``sample(mask=...)`` behaves as gymnasium's: ``mask`` has one 0/1 entry per action (an int8
ndarray for gymnasium; any sequence of 0/1 here) and an all-zero mask returns ``start``.
With numpy, samples are numpy values (``np.int64``, ndarrays) as gymnasium's are; without
numpy they are ``int`` and nested lists and the generator is ``random.Random``.

``discrete``, ``box`` and ``dict_space`` build a space with whichever implementation is
active; ``backend()`` names it (``"gymnasium"`` or ``"polis"``).
"""

import random as _random

from ._compat import gymnasium_spaces, np


def backend():
    return "gymnasium" if gymnasium_spaces() is not None else "polis"


def discrete(n):
    gs = gymnasium_spaces()
    return gs.Discrete(n) if gs is not None else Discrete(n)


def box(low, high, shape, dtype):
    """``dtype`` is a numpy dtype name ("int8", "float32", ...)."""
    gs = gymnasium_spaces()
    if gs is not None:
        return gs.Box(low=low, high=high, shape=tuple(shape), dtype=np.dtype(dtype))
    return Box(low, high, shape, dtype)


def box_bounds(low, high, dtype):
    """A box with one bound per element: ``low`` and ``high`` are numpy arrays of its shape
    (numpy only)."""
    gs = gymnasium_spaces()
    dt = np.dtype(dtype)
    if gs is not None:
        return gs.Box(low=np.asarray(low, dt), high=np.asarray(high, dt), dtype=dt)
    return Box(np.asarray(low, dt), np.asarray(high, dt), np.shape(low), dt)


def multi_discrete(nvec):
    """``MultiDiscrete(nvec)``: one discrete choice per entry (a vector env's batched
    action space)."""
    gs = gymnasium_spaces()
    if gs is not None:
        return gs.MultiDiscrete(np.asarray(nvec, np.int64))
    return MultiDiscrete(nvec)


def dict_space(spaces):
    gs = gymnasium_spaces()
    return gs.Dict(spaces) if gs is not None else Dict(spaces)


def _new_seed():
    return _random.SystemRandom().randrange(1 << 63)


class Space:
    """Common seeding. ``np_random`` is a numpy Generator with numpy, else random.Random."""

    def __init__(self, shape, dtype, seed=None):
        self.shape = shape
        self.dtype = dtype
        self._rng = None
        if seed is not None:
            self.seed(seed)

    def seed(self, seed=None):
        if seed is None:
            seed = _new_seed()
        self._rng = np.random.default_rng(seed) if np is not None else _random.Random(seed)
        return [seed]

    @property
    def np_random(self):
        if self._rng is None:
            self.seed()
        return self._rng

    def __contains__(self, x):
        return self.contains(x)


def _flat(x):
    if np is not None and isinstance(x, np.ndarray):
        return x.ravel().tolist()
    out = []
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
        else:
            out.append(v)
    return out


def _shape_of(x):
    if np is not None and isinstance(x, np.ndarray):
        return tuple(x.shape)
    shape = []
    while isinstance(x, (list, tuple)):
        shape.append(len(x))
        if not x:
            break
        x = x[0]
    return tuple(shape)


class Discrete(Space):
    def __init__(self, n, seed=None, start=0):
        n = int(n)
        if n <= 0:
            raise ValueError(f"Discrete: n must be positive, got {n}")
        self.n = n
        self.start = int(start)
        super().__init__((), np.dtype(np.int64) if np is not None else "int64", seed)

    def _choice(self, items):
        rng = self.np_random
        if np is not None:
            return items[int(rng.integers(len(items)))]
        return items[rng.randrange(len(items))]

    def sample(self, mask=None, probability=None):
        if mask is not None and probability is not None:
            raise ValueError("Discrete.sample: give mask or probability, not both")
        if mask is not None:
            m = _flat(mask)
            if len(m) != self.n:
                raise ValueError(f"Discrete.sample: mask has {len(m)} entries, expected "
                                 f"{self.n}")
            if any(v not in (0, 1) for v in m):
                raise ValueError("Discrete.sample: mask entries must be 0 or 1")
            legal = [i for i, v in enumerate(m) if v == 1]
            i = self._choice(legal) if legal else 0
        elif probability is not None:
            p = [float(v) for v in _flat(probability)]
            if len(p) != self.n or any(v < 0 for v in p) or abs(sum(p) - 1.0) > 1e-6:
                raise ValueError(f"Discrete.sample: probability must be {self.n} "
                                 f"non-negative numbers summing to 1")
            rng = self.np_random
            if np is not None:
                i = int(rng.choice(self.n, p=p))
            else:
                i = rng.choices(range(self.n), weights=p)[0]
        else:
            rng = self.np_random
            i = int(rng.integers(self.n)) if np is not None else rng.randrange(self.n)
        v = self.start + i
        return np.int64(v) if np is not None else v

    def contains(self, x):
        if isinstance(x, bool):
            return False
        if np is not None:
            if isinstance(x, np.ndarray):
                if x.shape != () or not np.issubdtype(x.dtype, np.integer):
                    return False
                x = int(x)
            elif isinstance(x, np.integer):
                x = int(x)
        if not isinstance(x, int):
            return False
        return self.start <= x < self.start + self.n

    def __repr__(self):
        return f"Discrete({self.n})" if self.start == 0 else \
            f"Discrete({self.n}, start={self.start})"

    def __eq__(self, other):
        return isinstance(other, Discrete) and (self.n, self.start) == (other.n, other.start)

    __hash__ = None


class Box(Space):
    """A box with one scalar bound for every element (all polis observation fields are
    bounded by their dtype)."""

    def __init__(self, low, high, shape, dtype, seed=None):
        shape = tuple(int(d) for d in shape)
        if np is not None:
            dt = np.dtype(dtype)
            self.low = np.broadcast_to(np.asarray(low, dt), shape).copy()
            self.high = np.broadcast_to(np.asarray(high, dt), shape).copy()
            if np.ndim(low) or np.ndim(high):  # one bound per element
                low, high = self.low, self.high
        else:
            dt = str(dtype)
            self.low, self.high = low, high
        self._lo, self._hi = low, high
        self._int = not str(dtype).startswith("float")
        super().__init__(shape, dt, seed)

    def _size(self):
        size = 1
        for d in self.shape:
            size *= d
        return size

    def sample(self, mask=None):
        if mask is not None:
            raise ValueError("Box.sample: a box takes no mask")
        rng = self.np_random
        lo, hi = self._lo, self._hi
        if np is not None:
            if self._int:
                return rng.integers(lo, hi, size=self.shape, endpoint=True).astype(self.dtype)
            lo = np.broadcast_to(np.asarray(lo, np.float64), self.shape)
            hi = np.broadcast_to(np.asarray(hi, np.float64), self.shape)
            bounded = np.isfinite(lo) & np.isfinite(hi)
            v = np.where(bounded, rng.uniform(np.where(bounded, lo, 0.0),
                                              np.where(bounded, hi, 1.0)),
                         rng.normal(size=self.shape))
            return np.clip(v, lo, hi).astype(self.dtype)
        vals = []
        for _ in range(self._size()):
            if self._int:
                vals.append(rng.randint(lo, hi))
            elif lo > float("-inf") and hi < float("inf"):
                vals.append(rng.uniform(lo, hi))
            else:
                vals.append(rng.gauss(0.0, 1.0))
        for d in reversed(self.shape[1:]):
            vals = [vals[i:i + d] for i in range(0, len(vals), d)]
        return vals

    def contains(self, x):
        if np is not None:
            if isinstance(x, np.ndarray):
                if not np.can_cast(x.dtype, self.dtype):
                    return False
            else:
                # plain Python values, as gymnasium converts them: integers for an integer
                # box, any real number for a float box
                try:
                    x = np.asarray(x)
                except (TypeError, ValueError):
                    return False
                if x.dtype.kind not in ("iub" if self._int else "iubf"):
                    return False
            if x.shape != self.shape:
                return False
            return bool(np.all(x >= self._lo) and np.all(x <= self._hi))
        if _shape_of(x) != self.shape:
            return False
        for v in _flat(x):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return False
            if self._int and not isinstance(v, int):
                return False
            if not self._lo <= v <= self._hi:
                return False
        return True

    def __repr__(self):
        if np is not None and isinstance(self._lo, np.ndarray):
            return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"
        return f"Box({self._lo}, {self._hi}, {self.shape}, {self.dtype})"

    def __eq__(self, other):
        if not (isinstance(other, Box) and self.shape == other.shape
                and str(self.dtype) == str(other.dtype)):
            return False
        if np is not None:
            return bool(np.array_equal(self.low, other.low)
                        and np.array_equal(self.high, other.high))
        return (self._lo, self._hi) == (other._lo, other._hi)

    __hash__ = None


class MultiDiscrete(Space):
    """One ``Discrete(nvec[i])`` per entry: ``sample()`` an int64 array, ``contains``."""

    def __init__(self, nvec, seed=None):
        if np is None:
            raise ValueError("MultiDiscrete needs numpy")
        self.nvec = np.asarray(nvec, np.int64)
        if self.nvec.size == 0 or (self.nvec <= 0).any():
            raise ValueError(f"MultiDiscrete: entries of nvec must be positive, got {nvec}")
        super().__init__(self.nvec.shape, np.dtype(np.int64), seed)

    def sample(self, mask=None):
        if mask is not None:
            raise ValueError("MultiDiscrete.sample: masks are not supported here")
        return self.np_random.integers(self.nvec).astype(np.int64)

    def contains(self, x):
        x = np.asarray(x)
        return bool(x.shape == self.shape and x.dtype.kind in "iu"
                    and (x >= 0).all() and (x < self.nvec).all())

    def __repr__(self):
        return f"MultiDiscrete({self.nvec.tolist()})"

    def __eq__(self, other):
        return isinstance(other, MultiDiscrete) and np.array_equal(self.nvec, other.nvec)

    __hash__ = None


class Dict(Space):
    def __init__(self, spaces, seed=None):
        self.spaces = dict(spaces)
        super().__init__(None, None, None)
        if seed is not None:
            self.seed(seed)

    def seed(self, seed=None):
        if seed is None:
            seed = _new_seed()
        super().seed(seed)
        # each subspace gets its own seed drawn from this one, as gymnasium does
        seeds = [seed]
        for k, sp in self.spaces.items():
            seeds += sp.seed(int(self._draw_seed()))
        return seeds

    def _draw_seed(self):
        rng = self.np_random
        return rng.integers(1 << 62) if np is not None else rng.randrange(1 << 62)

    def sample(self, mask=None):
        if mask is not None:
            return {k: sp.sample(mask=mask[k]) if mask.get(k) is not None else sp.sample()
                    for k, sp in self.spaces.items()}
        return {k: sp.sample() for k, sp in self.spaces.items()}

    def contains(self, x):
        if not isinstance(x, dict) or set(x) != set(self.spaces):
            return False
        return all(sp.contains(x[k]) for k, sp in self.spaces.items())

    def __getitem__(self, key):
        return self.spaces[key]

    def __iter__(self):
        return iter(self.spaces)

    def __len__(self):
        return len(self.spaces)

    def keys(self):
        return self.spaces.keys()

    def values(self):
        return self.spaces.values()

    def items(self):
        return self.spaces.items()

    def __repr__(self):
        return "Dict(" + ", ".join(f"{k!r}: {v!r}" for k, v in self.spaces.items()) + ")"

    def __eq__(self, other):
        return isinstance(other, Dict) and self.spaces == other.spaces

    __hash__ = None
