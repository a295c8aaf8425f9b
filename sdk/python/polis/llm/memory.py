"""The generative agent's memories (docs/llm.md, "Memories").

- :class:`LongTermMemory`: every perception, plan, reflection and action outcome as a
  record (text, kind, tick, importance), retrieved for a query by a weighted sum of
  similarity, recency and importance (Park et al.'s retrieval, as the Melting Pot study
  uses it). Similarity is the cosine of embeddings when an embedder is given (an
  embeddings endpoint), else the **lexical fallback**: the cosine of TF-IDF vectors over the
  records' words (lower-cased runs of letters and digits; idf = ln((1 + N) / (1 + df)) + 1,
  sublinear tf = 1 + ln(count)). Recency is ``decay ** (now - last_access)`` in ticks (a
  retrieved record is accessed again); importance is the record's score / 10 (the study
  scored every memory 10). Each component is min-max normalised over the candidates before
  weighting, as Park et al. do. When the embeddings endpoint fails for good (after the
  client's retries), the memory says so (``fell_back``) and uses the lexical fallback from
  then on, for every record.
- :class:`ShortTermMemory`: a dict of what the agent needs at hand (name, current plan and
  goals, the last observations, the last action and its outcome).
- :class:`SpatialMemory`: the agent's position and facing, the cells it has seen, the trees
  (or any named landmarks) it knows, read from the text views' ``[row, column]`` positions.
"""
import math
import re
from collections import Counter

from .client import LLMError, ModelUnavailable

_WORD = re.compile(r"[a-z0-9]+")


def words(text):
    return _WORD.findall(text.lower())


def cosine(u, v):
    if not u or not v:
        return 0.0
    if isinstance(u, dict):
        if len(u) > len(v):
            u, v = v, u
        dot = sum(x * v.get(k, 0.0) for k, x in u.items())
        nu = math.sqrt(sum(x * x for x in u.values()))
        nv = math.sqrt(sum(x * x for x in v.values()))
    else:
        dot = sum(a * b for a, b in zip(u, v))
        nu = math.sqrt(sum(a * a for a in u))
        nv = math.sqrt(sum(b * b for b in v))
    return dot / (nu * nv) if nu and nv else 0.0


class Record:
    __slots__ = ("id", "text", "kind", "tick", "importance", "last_access", "vector", "bag")

    def __init__(self, rid, text, kind, tick, importance):
        self.id = rid
        self.text = text
        self.kind = kind
        self.tick = tick
        self.importance = importance
        self.last_access = tick
        self.vector = None
        self.bag = Counter(words(text))

    def to_json(self):
        return {"id": self.id, "kind": self.kind, "tick": self.tick,
                "importance": self.importance, "text": self.text}


class LongTermMemory:
    """``embedder``: a function from a list of texts to a list of vectors (e.g.
    ``ChatClient.embed``), or None for the lexical fallback. ``weights``: (similarity,
    recency, importance), default (1, 1, 1); ``decay`` per tick, default 0.99."""

    def __init__(self, embedder=None, *, weights=(1.0, 1.0, 1.0), decay=0.99):
        self.embedder = embedder
        self.weights = tuple(float(w) for w in weights)
        self.decay = float(decay)
        self.records = []
        self._df = Counter()
        self.fell_back = None  # why the embeddings were given up, if they were

    def _embed(self, texts):
        """Vectors of texts, or None once the embeddings have failed (lexical from then)."""
        if self.embedder is None:
            return None
        try:
            return self.embedder(texts)
        except ModelUnavailable:
            raise
        except LLMError as e:
            self.embedder = None
            self.fell_back = e.reason
            return None

    def __len__(self):
        return len(self.records)

    def add(self, text, kind, tick, importance=10.0):
        r = Record(len(self.records), text, kind, tick, float(importance))
        v = self._embed([text])
        if v is not None:
            r.vector = v[0]
        self.records.append(r)
        self._df.update(set(r.bag))
        return r

    def _tfidf(self, bag):
        n = len(self.records)
        return {w: (1.0 + math.log(c)) * (math.log((1.0 + n) / (1.0 + self._df.get(w, 0))) + 1)
                for w, c in bag.items()}

    def similarities(self, query, candidates):
        q = self._embed([query])
        if q is not None:
            return [cosine(q[0], r.vector) for r in candidates]
        q = self._tfidf(Counter(words(query)))
        return [cosine(q, self._tfidf(r.bag)) for r in candidates]

    def retrieve(self, query, now, k=10, kinds=None):
        """The k records that score best for ``query`` at tick ``now`` (best first), each
        marked accessed at ``now``. ``kinds``: only records of these kinds."""
        cands = [r for r in self.records if kinds is None or r.kind in kinds]
        if not cands:
            return []
        sim = _norm(self.similarities(query, cands))
        rec = _norm([self.decay ** max(0, now - r.last_access) for r in cands])
        imp = _norm([r.importance / 10.0 for r in cands])
        ws, wr, wi = self.weights
        scored = sorted(range(len(cands)),
                        key=lambda i: (-(ws * sim[i] + wr * rec[i] + wi * imp[i]), -cands[i].id))
        best = [cands[i] for i in scored[:k]]
        for r in best:
            r.last_access = now
        return best

    def recent(self, n, kinds=None):
        rs = [r for r in self.records if kinds is None or r.kind in kinds]
        return rs[-n:]


def _norm(xs):
    lo, hi = min(xs), max(xs)
    if hi - lo < 1e-12:
        return [0.5 for _ in xs]
    return [(x - lo) / (hi - lo) for x in xs]


class ShortTermMemory(dict):
    """A dict; :meth:`text` renders a member for a prompt ("None" when absent)."""

    def text(self, key, default="None"):
        v = self.get(key)
        if v is None or v == "" or v == []:
            return default
        if isinstance(v, (list, tuple)):
            return "\n".join(str(x) for x in v)
        return str(v)


_AT = re.compile(r"\[(\d+), (\d+)\]")
_ME = re.compile(r"You are at position \[(\d+), (\d+)\](?:, facing (\w+))?")
_SIZE = re.compile(r"(\d+) x (\d+) map")
_LANDMARK = re.compile(r"Observed (tree \d+) at position \[(\d+), (\d+)\]")


class SpatialMemory:
    """Where the agent is and what it has seen, from its text views."""

    def __init__(self):
        self.position = None
        self.facing = None
        self.rows = self.cols = None
        self.seen = set()
        self.landmarks = {}

    def update(self, view_text):
        m = _ME.search(view_text)
        if m:
            self.position = (int(m.group(1)), int(m.group(2)))
            self.facing = m.group(3)
            self.seen.add(self.position)
        if self.rows is None:
            s = _SIZE.search(view_text)
            if s:
                self.rows, self.cols = int(s.group(1)), int(s.group(2))
        for r, c in _AT.findall(view_text):
            self.seen.add((int(r), int(c)))
        for name, r, c in _LANDMARK.findall(view_text):
            self.landmarks[name] = (int(r), int(c))

    def explored(self):
        """A sentence on the map explored so far."""
        if self.rows:
            return "%.0f%% of the %d x %d map (%d cells seen)" % (
                100.0 * len(self.seen) / (self.rows * self.cols), self.rows, self.cols,
                len(self.seen))
        return "%d cells seen" % len(self.seen)

    def known(self):
        if not self.landmarks:
            return "None known yet."
        return "; ".join("%s at [%d, %d]" % (k, r, c)
                         for k, (r, c) in sorted(self.landmarks.items()))
