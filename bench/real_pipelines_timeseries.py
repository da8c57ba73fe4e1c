"""Time-series pipelines from public forecasting / anomaly-detection code x backends.

New pipelines in the idioms of public time-series code (nobody tuned patchport to them):
rolling statistics by ``sliding_window_view`` and by the ``np.cumsum`` difference trick, a
rolling z-score anomaly score, an exponentially weighted mean written as a Python loop that
appends to a list, lag features by ``np.roll`` with the wrapped head set to NaN and
``np.nan_to_num``, a scikit-learn style ``MinMaxScaler`` / ``RobustScaler`` fitted before
the session and applied (and inverted) inside it, spectral features (``np.fft.rfft``,
dominant frequency by ``argmax`` into a frequency table, spectral centroid and entropy),
quantile binning by ``np.digitize`` into one-hot rows of ``np.eye``, seasonal and second
differences with ``np.r_`` padding, peak and zero-crossing counts, an autocorrelation by
``np.correlate(mode="full")``, a moving-average trend by ``np.convolve(mode="same")``,
a linear detrend by ``np.polyfit`` / ``np.polyval``, a median-absolute-deviation outlier
clip, Holt's linear smoothing with level and trend kept in ``self``, and windows by
``torch.Tensor.unfold`` into a small forecaster. Each is traced once, exported and
replayed on fresh inputs against the plain code; the classes are those of
``bench/real_pipelines.py`` (whose harness is reused).

Run: python bench/real_pipelines_timeseries.py [--variants] [--all-backends] [name ...]
(onnx and pt2 by default; ``--all-backends`` adds jit; ``--variants`` runs one-line
changes of the data-dependent idioms instead, each of which must be right or loud.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file
torch.manual_seed(0)
P = harness.Pipeline

LENGTH, WINDOW, CHANNELS = 128, 16, 4
EPS = 1e-8


def _series(rng: np.random.Generator) -> np.ndarray:
    """A noisy daily-looking signal: a trend, a period of 24 samples and a few spikes."""
    t = np.arange(LENGTH)
    base = 0.01 * t + np.sin(2 * np.pi * t / 24) + 0.3 * rng.normal(size=LENGTH)
    spikes = rng.choice(LENGTH, 3, replace=False)
    base[spikes] += rng.choice([-4.0, 4.0], 3)
    return base


def _multi(rng: np.random.Generator) -> np.ndarray:
    return np.stack([_series(rng) * (i + 1) for i in range(CHANNELS)], axis=1)


def _one(rng):
    return {"x": _series(rng)}


def _many(rng):
    return {"x": _multi(rng)}


# ------------------------------------------------------------------ rolling statistics
def rolling_zscore(x):
    """A rolling z-score over sliding_window_view windows; the score of the last point and
    the largest absolute score (an anomaly detector's output)."""
    windows = sliding_window_view(x, WINDOW)
    mu = windows.mean(axis=-1)
    sd = windows.std(axis=-1)
    z = (x[WINDOW - 1 :] - mu) / (sd + EPS)
    return {"z": z, "last": z[-1:], "worst": np.max(np.abs(z), keepdims=True)}


def cumsum_rolling_mean(x):
    """The rolling mean by the cumulative-sum difference (the classic StackOverflow one)."""
    c = np.cumsum(np.insert(x, 0, 0.0))
    mean = (c[WINDOW:] - c[:-WINDOW]) / float(WINDOW)
    return {"mean": mean}


def ewma_loop(x, alpha=0.2):
    """An exponentially weighted mean written as a loop that appends to a list."""
    out = [x[0]]
    for value in x[1:]:
        out.append(alpha * value + (1 - alpha) * out[-1])
    return {"ewma": np.array(out)}


def lag_features(x):
    """Lags 1, 2 and 24 by np.roll, the wrapped head set to NaN, then nan_to_num."""
    lags = []
    for k in (1, 2, 24):
        lagged = np.roll(x, k)
        lagged[:k] = np.nan
        lags.append(lagged)
    features = np.stack([x, *lags], axis=1)
    return {"features": np.nan_to_num(features, nan=0.0)}


class MinMaxScaler:
    """scikit-learn's MinMaxScaler arithmetic: fitted on plain data, applied to traced."""

    def __init__(self, feature_range=(0.0, 1.0)):
        self.feature_range = feature_range

    def fit(self, X):
        self.data_min_ = np.nanmin(X, axis=0)
        self.data_max_ = np.nanmax(X, axis=0)
        data_range = self.data_max_ - self.data_min_
        data_range[data_range == 0.0] = 1.0
        lo, hi = self.feature_range
        self.scale_ = (hi - lo) / data_range
        self.min_ = lo - self.data_min_ * self.scale_
        return self

    def transform(self, X):
        X = X.copy()
        X *= self.scale_
        X += self.min_
        return X

    def inverse_transform(self, X):
        X = X.copy()
        X -= self.min_
        X /= self.scale_
        return X


_SCALER = MinMaxScaler((-1.0, 1.0)).fit(_multi(np.random.default_rng(42)))


def minmax_scaler(x):
    scaled = _SCALER.transform(x)
    return {"scaled": scaled, "restored": _SCALER.inverse_transform(np.clip(scaled, -1, 1))}


class RobustScaler:
    """scikit-learn's RobustScaler: median and interquartile range from np.percentile."""

    def fit(self, X):
        q = np.percentile(X, [25.0, 75.0], axis=0)
        self.center_ = np.median(X, axis=0)
        self.scale_ = q[1] - q[0]
        return self

    def transform(self, X):
        return (X - self.center_) / self.scale_


def robust_scaler_fit_transform(x):
    """Fitted on the traced window itself (a per-window normaliser), then applied."""
    return {"scaled": RobustScaler().fit(x).transform(x)}


# ------------------------------------------------------------------ spectral / shape features
_FREQS = np.fft.rfftfreq(LENGTH, d=1.0)


def spectral_features(x):
    """Magnitude spectrum, dominant frequency, spectral centroid and entropy."""
    spectrum = np.abs(np.fft.rfft(x - x.mean()))
    power = spectrum**2
    dominant = _FREQS[np.argmax(power[1:]) + 1]
    centroid = np.sum(_FREQS * power) / (np.sum(power) + EPS)
    p = power / (power.sum() + EPS)
    entropy = -np.sum(p * np.log(p + EPS))
    return {"features": np.array([dominant, centroid, entropy])}


_EDGES = np.linspace(-3, 3, 9)


def digitize_onehot(x):
    """Quantile-style binning by np.digitize against fixed edges, one-hot rows of np.eye."""
    z = (x - x.mean()) / (x.std() + EPS)
    bins = np.digitize(z, _EDGES)
    onehot = np.eye(len(_EDGES) + 1)[bins]
    return {"hist": onehot.sum(axis=0), "last": onehot[-1]}


def differencing(x, season=24):
    """Seasonal difference, second difference, padded back to the length with np.r_."""
    seasonal = x[season:] - x[:-season]
    second = np.diff(x, n=2)
    return {
        "seasonal": np.r_[np.zeros(season), seasonal],
        "second": np.r_[0.0, 0.0, second],
    }


def peaks_and_crossings(x):
    """Local-maximum count by shifted comparisons; zero-crossing rate by signbit changes."""
    centred = x - x.mean()
    peaks = (x[1:-1] > x[:-2]) & (x[1:-1] > x[2:])
    crossings = np.diff(np.signbit(centred).astype(np.int8)) != 0
    return {"counts": np.array([peaks.sum(), crossings.mean()], dtype=np.float64)}


def autocorrelation(x, lags=30):
    """Autocorrelation from np.correlate(mode="full"), normalised by the variance."""
    centred = x - x.mean()
    full = np.correlate(centred, centred, mode="full")
    acf = full[len(x) - 1 :] / (centred.var() * len(x))
    return {"acf": acf[:lags]}


def moving_average_trend(x, k=9):
    """A trend by np.convolve(mode="same") with a box kernel, and the residual."""
    trend = np.convolve(x, np.ones(k) / k, mode="same")
    return {"trend": trend, "residual": x - trend}


def linear_detrend(x):
    """A linear trend fitted by np.polyfit over the sample index, removed by np.polyval."""
    t = np.arange(len(x), dtype=np.float64)
    coeffs = np.polyfit(t, x, 1)
    return {"detrended": x - np.polyval(coeffs, t), "slope": coeffs[:1]}


def mad_clip(x, threshold=3.5):
    """Modified z-score by the median absolute deviation; outliers replaced by the median."""
    med = np.median(x)
    mad = np.median(np.abs(x - med))
    modified = 0.6745 * (x - med) / (mad + EPS)
    return {"clean": np.where(np.abs(modified) > threshold, med, x)}


class Holt:
    """Holt's linear exponential smoothing: level and trend kept in self across samples."""

    def __init__(self, alpha=0.3, beta=0.1):
        self.alpha, self.beta = alpha, beta

    def __call__(self, x):
        self.level, self.trend = x[0], x[1] - x[0]
        for value in x[1:]:
            last = self.level
            self.level = self.alpha * value + (1 - self.alpha) * (self.level + self.trend)
            self.trend = self.beta * (self.level - last) + (1 - self.beta) * self.trend
        return {"forecast": np.array([self.level + h * self.trend for h in (1, 2, 3)])}


def holt(x):
    return Holt()(x)


_FORECASTER = torch.nn.Sequential(
    torch.nn.Linear(WINDOW * CHANNELS, 32), torch.nn.ReLU(), torch.nn.Linear(32, CHANNELS)
).eval()
_MEAN = np.linspace(0.1, 0.4, CHANNELS).astype(np.float32)
_STD = np.linspace(1.0, 4.0, CHANNELS).astype(np.float32)


def unfold_forecaster(x):
    """Normalised channels, windows by Tensor.unfold, a forecaster on each, de-normalised."""
    z = torch.from_numpy((x.astype(np.float32) - _MEAN) / _STD)
    windows = z.unfold(0, WINDOW, WINDOW // 2)  # (n, C, WINDOW)
    with torch.no_grad():
        pred = _FORECASTER(windows.reshape(windows.shape[0], -1))
    return {"forecast": pred.numpy() * _STD + _MEAN}


PIPELINES = [
    P("rolling_zscore", rolling_zscore, _one),
    P("cumsum_rolling_mean", cumsum_rolling_mean, _one),
    P("ewma_loop", ewma_loop, _one),
    P("lag_features", lag_features, _one),
    P("minmax_scaler", minmax_scaler, _many),
    P("robust_scaler", robust_scaler_fit_transform, _many),
    P("spectral_features", spectral_features, _one),
    P("digitize_onehot", digitize_onehot, _one),
    P("differencing", differencing, _one),
    P("peaks_and_crossings", peaks_and_crossings, _one),
    P("autocorrelation", autocorrelation, _one),
    P("moving_average_trend", moving_average_trend, _one),
    P("linear_detrend", linear_detrend, _one),
    P("mad_clip", mad_clip, _one),
    P("holt", holt, _one),
    P("unfold_forecaster", unfold_forecaster, _many),
]


# ------------------------------------------------------------------ one-line variants
def _with_gaps(rng):
    x = _series(rng)
    x[rng.choice(LENGTH, 6, replace=False)] = np.nan
    return {"x": x}


def interp_gaps(x):
    """Fill NaN gaps by np.interp over the valid samples (positions decided by the data)."""
    x = x.copy()
    missing = np.isnan(x)
    x[missing] = np.interp(np.flatnonzero(missing), np.flatnonzero(~missing), x[~missing])
    return {"filled": x}


def zero_gaps(x):
    """Gaps set to zero by a boolean mask assignment."""
    x = x.copy()
    x[np.isnan(x)] = 0.0
    return {"filled": x}


def nanmean_gaps(x):
    """NaN-aware statistics of a series with gaps."""
    return {"stats": np.array([np.nanmean(x), np.nanstd(x), np.nanmax(x)])}


def valid_mean(x):
    """The mean of the valid samples by a boolean selection."""
    return {"mean": np.asarray([x[~np.isnan(x)].mean()])}


def flat_guard(x):
    """A normaliser that returns zeros for a flat window (a data-dependent branch)."""
    sd = np.std(x)
    if sd < 1e-6:
        return {"z": np.zeros_like(x)}
    return {"z": (x - x.mean()) / sd}


def count_anomalies(x):
    """How many samples are over three sigma: the length of np.flatnonzero."""
    z = (x - x.mean()) / (x.std() + EPS)
    return {"count": np.array([len(np.flatnonzero(np.abs(z) > 3.0))], dtype=np.float64)}


def first_anomaly(x):
    """The first anomaly's index, -1 when there is none (a guard on a data-sized array)."""
    z = (x - x.mean()) / (x.std() + EPS)
    hits = np.where(np.abs(z) > 3.0)[0]
    return {"first": np.array([hits[0] if len(hits) else -1], dtype=np.float64)}


def peak_window(x):
    """The window around the largest sample, its position read by int()."""
    i = int(np.argmax(x))
    lo = max(i - 4, 0)
    return {"window_mean": np.asarray([x[lo : i + 5].mean()])}


def percentile_clip(x):
    """Winsorise at the 5th and 95th percentiles of the window itself."""
    lo, hi = np.percentile(x, [5, 95])
    return {"clipped": np.clip(x, lo, hi)}


def ewma_float_state(x, alpha=0.2):
    """The EWMA loop with a Python float as its state (float() of each step)."""
    state = float(x[0])
    out = []
    for value in x:
        state = alpha * float(value) + (1 - alpha) * state
        out.append(state)
    return {"ewma": np.array(out)}


def nan_mask_where(x):
    """Gaps filled with the window mean of the valid samples by np.where."""
    mean = np.nanmean(x)
    return {"filled": np.where(np.isnan(x), mean, x)}


def builtin_sum_len(x):
    """The mean as Python's sum() over the array divided by len()."""
    return {"mean": np.asarray([sum(x) / len(x)])}


def statistics_module(x):
    """The standard library's statistics.fmean / pstdev on the series."""
    import statistics

    return {"stats": np.array([statistics.fmean(x), statistics.pstdev(x)])}


def comprehension_clip(x):
    """Outliers clipped in a list comprehension, rebuilt with np.array."""
    return {"clipped": np.array([min(max(v, -2.0), 2.0) for v in x])}


def any_spike(x):
    """A flag from Python's any() over a comparison."""
    return {"flag": np.asarray([1.0 if any(np.abs(x) > 3.0) else 0.0])}


def max_builtin_window(x):
    """The largest window mean by Python's max() over a list of means."""
    means = [x[i : i + WINDOW].mean() for i in range(0, LENGTH - WINDOW + 1, WINDOW)]
    return {"best": np.asarray([max(means)])}


def tolist_loop(x):
    """Differences computed on x.tolist() in plain Python."""
    values = x.tolist()
    return {"diff": np.array([b - a for a, b in zip(values, values[1:])])}


VARIANTS = [
    P("builtin_sum_len", builtin_sum_len, _one),
    P("statistics_module", statistics_module, _one),
    P("comprehension_clip", comprehension_clip, _one),
    P("any_spike", any_spike, _one),
    P("max_builtin_window", max_builtin_window, _one),
    P("tolist_loop", tolist_loop, _one),
    P("interp_gaps", interp_gaps, _with_gaps),
    P("zero_gaps", zero_gaps, _with_gaps),
    P("nanmean_gaps", nanmean_gaps, _with_gaps),
    P("valid_mean", valid_mean, _with_gaps),
    P("flat_guard", flat_guard, _one),
    P("count_anomalies", count_anomalies, _one),
    P("first_anomaly", first_anomaly, _one),
    P("peak_window", peak_window, _one),
    P("percentile_clip", percentile_clip, _one),
    P("ewma_float_state", ewma_float_state, _one),
    P("nan_mask_where", nan_mask_where, _with_gaps),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    return harness.run_probe(names, PIPELINES, VARIANTS, "timeseries")


if __name__ == "__main__":
    main(sys.argv[1:])
