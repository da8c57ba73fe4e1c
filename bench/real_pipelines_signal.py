"""Signal-processing pipelines from real sensor / audio code x backends: right, loud, silent?

New pipelines in the styles of public NumPy signal code (nobody tuned patchport to them):
speech features (pre-emphasis, index-matrix framing, power spectrum, a mel filter bank
filled by loops, a DCT, liftering), a log-mel spectrogram (reflect padding, strided
framing, Hann window, mel floor and dynamic-range clamp), EMG window features (MAV, zero
crossings, slope sign changes, waveform length, RMS), an ECG QRS front end (recursive
filters written sample by sample, moving-window integration), a Savitzky-Golay smoother
(least-squares coefficients applied by convolution), a biquad written in direct form II
transposed, IMU calibration (``np.interp`` tables, ``np.polyval``, ``np.unwrap``,
``np.gradient``, ``np.trapezoid``), robust normalisation with NaN dropouts, histogram and
bucket features, a robot observation history (``np.roll`` ring buffer), spectral EMG
features (mean / median frequency), a one-euro filter class with state, and a Kalman
filter in the filterpy style. Each is traced once, exported with every backend and
replayed on fresh inputs against the plain code, classified as ``bench/real_pipelines.py``
classifies (its harness is reused).

Run: python bench/real_pipelines_signal.py [pipeline-name ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_pipelines as harness  # noqa: E402

harness.HERE = str(Path(__file__).resolve())  # the user's lines are in this file


# ------------------------------------------------------------------ speech features
def _hz_to_mel(hz):  # noqa: ANN001, ANN202
    return 2595.0 * np.log10(1.0 + hz / 700.0)


def _mel_to_hz(mel):  # noqa: ANN001, ANN202
    return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)


def _triangle_bank(n_filters: int, n_fft: int, rate: int) -> np.ndarray:
    """Filter bank filled bin by bin in Python loops (built inside the session)."""
    mels = np.linspace(_hz_to_mel(0.0), _hz_to_mel(rate / 2), n_filters + 2)
    bins = np.floor((n_fft + 1) * _mel_to_hz(mels) / rate)
    bank = np.zeros([n_filters, n_fft // 2 + 1])
    for j in range(n_filters):
        for i in range(int(bins[j]), int(bins[j + 1])):
            bank[j, i] = (i - bins[j]) / (bins[j + 1] - bins[j])
        for i in range(int(bins[j + 1]), int(bins[j + 2])):
            bank[j, i] = (bins[j + 2] - i) / (bins[j + 2] - bins[j + 1])
    return bank


def speech_mfcc(signal):  # noqa: ANN001, ANN201
    """Pre-emphasis, framing by an index matrix, power spectrum, filter bank, DCT, lifter."""
    rate, frame_len, frame_step, n_fft, n_filt, n_cep = 8000, 64, 32, 64, 12, 8
    emphasized = np.append(signal[0], signal[1:] - 0.97 * signal[:-1])
    n_frames = 1 + int(np.ceil((len(emphasized) - frame_len) / frame_step))
    pad_len = (n_frames - 1) * frame_step + frame_len
    padded = np.concatenate((emphasized, np.zeros((pad_len - len(emphasized),))))
    idx = (
        np.tile(np.arange(0, frame_len), (n_frames, 1))
        + np.tile(np.arange(0, n_frames * frame_step, frame_step), (frame_len, 1)).T
    )
    frames = padded[np.array(idx, dtype=np.int32)]
    frames = frames * np.tile(np.hamming(frame_len), (n_frames, 1))
    power = 1.0 / n_fft * np.square(np.absolute(np.fft.rfft(frames, n_fft)))
    energy = np.sum(power, 1)
    energy = np.where(energy == 0, np.finfo(float).eps, energy)
    feat = np.dot(power, _triangle_bank(n_filt, n_fft, rate).T)
    feat = np.log(np.where(feat == 0, np.finfo(float).eps, feat))
    k = np.arange(n_filt)
    dct = np.cos(np.pi / n_filt * (k[None, :] + 0.5) * np.arange(n_cep)[:, None])
    dct *= np.sqrt(2.0 / n_filt)
    dct[0] /= np.sqrt(2.0)
    cep = feat @ dct.T
    lift = 1 + (22 / 2.0) * np.sin(np.pi * np.arange(n_cep) / 22)
    cep = cep * lift
    cep[:, 0] = np.log(energy)
    return {"mfcc": cep}


# ------------------------------------------------------------------ log-mel spectrogram
def _slaney_bank(n_freqs: int, n_mels: int, rate: int) -> np.ndarray:
    fft_freqs = np.linspace(0, rate // 2, n_freqs)
    mel_pts = np.linspace(_hz_to_mel(0.0), _hz_to_mel(rate / 2), n_mels + 2)
    filter_freqs = _mel_to_hz(mel_pts)
    diff = np.diff(filter_freqs)
    slopes = np.expand_dims(filter_freqs, 0) - np.expand_dims(fft_freqs, 1)
    down = -slopes[:, :-2] / diff[:-1]
    up = slopes[:, 2:] / diff[1:]
    bank = np.maximum(np.zeros(1), np.minimum(down, up))
    enorm = 2.0 / (filter_freqs[2 : n_mels + 2] - filter_freqs[:n_mels])
    return bank * np.expand_dims(enorm, 0)


def log_mel(waveform):  # noqa: ANN001, ANN201
    """Centre padding (reflect), strided frames, Hann, |rfft|^2, mel floor, clamp, scale."""
    n_fft, hop, n_mels, rate = 64, 16, 10, 16000
    padded = np.pad(waveform, (n_fft // 2, n_fft // 2), mode="reflect")
    frames = sliding_window_view(padded, n_fft)[::hop]
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    spectrum = np.abs(np.fft.rfft(frames * window, axis=-1)) ** 2
    mel = np.dot(_slaney_bank(n_fft // 2 + 1, n_mels, rate).T, spectrum.T)
    log_spec = np.log10(np.maximum(mel, 1e-10))
    log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
    return {"features": ((log_spec + 4.0) / 4.0).astype(np.float32)}


# ------------------------------------------------------------------ EMG window features
def emg_features(emg):  # noqa: ANN001, ANN201
    """Windows of (channels, samples); MAV, ZC, SSC, WL, RMS per window and channel."""
    windows = sliding_window_view(emg, 40, axis=0)[::20]  # (n_windows, channels, 40)
    mav = np.mean(np.abs(windows), 2)
    sign_change = np.diff(np.sign(windows), axis=2)
    zc = np.sum(sign_change == -2, 2) + np.sum(sign_change == 2, 2)
    mid, left, right = windows[:, :, 1:-1], windows[:, :, :-2], windows[:, :, 2:]
    ssc = np.sum(((mid - left) * (mid - right)) >= 0.01, axis=2)
    wl = np.sum(np.abs(np.diff(windows, axis=2)), 2)
    rms = np.sqrt(np.mean(windows**2, axis=2))
    feats = np.concatenate([mav, zc, ssc, wl, rms], axis=1)
    return {"features": feats.astype(np.float32)}


# ------------------------------------------------------------------ ECG QRS front end
def qrs_frontend(ecg):  # noqa: ANN001, ANN201
    """Recursive low/high-pass written sample by sample, derivative, square, integrate."""
    low = ecg.copy()
    for n in range(len(ecg)):
        if n >= 1:
            low[n] += 2 * low[n - 1]
        if n >= 2:
            low[n] -= low[n - 2]
        if n >= 6:
            low[n] -= 2 * ecg[n - 6]
        if n >= 12:
            low[n] += ecg[n - 12]
    low = low / np.max(np.abs(low))
    deriv = np.zeros_like(low)
    for n in range(2, len(low) - 2):
        deriv[n] = (-low[n - 2] - 2 * low[n - 1] + 2 * low[n + 1] + low[n + 2]) / 8
    squared = np.square(deriv)
    win = 8
    integrated = np.convolve(squared, np.ones(win) / win, mode="same")
    return {"band": low, "integrated": integrated}


# ------------------------------------------------------------------ Savitzky-Golay
def _savgol_coeffs(window: int, order: int) -> np.ndarray:
    half = window // 2
    x = np.arange(-half, half + 1, dtype=float)
    vander = np.vander(x, order + 1, increasing=True)
    return np.linalg.pinv(vander)[0]  # the smoothing row


def savgol_smooth(signal):  # noqa: ANN001, ANN201
    """Least-squares coefficients applied by convolution, edges extended by mirroring."""
    coeffs = _savgol_coeffs(7, 2)
    half = 3
    extended = np.pad(signal, (half, half), mode="reflect")
    smooth = np.convolve(extended, coeffs[::-1], mode="valid")
    velocity = np.gradient(smooth, 0.01)
    return {"smooth": smooth, "velocity": velocity}


# ------------------------------------------------------------------ biquad (lfilter loop)
def _butter_lowpass(cutoff: float, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Second-order Butterworth by the bilinear transform (the audio cookbook formulas)."""
    w0 = 2 * np.pi * cutoff / rate
    alpha = np.sin(w0) / (2 * np.sqrt(2))
    cos_w0 = np.cos(w0)
    b = np.array([(1 - cos_w0) / 2, 1 - cos_w0, (1 - cos_w0) / 2])
    a = np.array([1 + alpha, -2 * cos_w0, 1 - alpha])
    return b / a[0], a / a[0]


def biquad_filtfilt(x):  # noqa: ANN001, ANN201
    """Direct form II transposed, sample by sample, run forward then backward."""
    b, a = _butter_lowpass(5.0, 100.0)

    def run(signal):  # noqa: ANN001, ANN202
        y = np.zeros_like(signal)
        z = np.zeros(2)
        for n in range(signal.shape[0]):
            y[n] = b[0] * signal[n] + z[0]
            z[0] = b[1] * signal[n] - a[1] * y[n] + z[1]
            z[1] = b[2] * signal[n] - a[2] * y[n]
        return y

    forward = run(x)
    both = run(forward[::-1])[::-1]
    return {"forward": forward, "zero_phase": both}


# ------------------------------------------------------------------ IMU calibration
_TEMP_TABLE = np.array([-10.0, 0.0, 10.0, 25.0, 40.0, 60.0])
_GYRO_BIAS_TABLE = np.array([0.012, 0.008, 0.004, 0.0, -0.003, -0.009])
_ACC_POLY = np.array([1.2e-5, -3.0e-4, 1.001, 0.002])  # cubic scale correction


def imu_calibration(gyro_z, acc_x, temperature, heading):  # noqa: ANN001, ANN201
    """Bias from a temperature table, polynomial scale, unwrapped heading, rates, areas."""
    bias = np.interp(temperature, _TEMP_TABLE, _GYRO_BIAS_TABLE)
    rate = gyro_z - bias
    acc = np.polyval(_ACC_POLY, acc_x)
    unwrapped = np.unwrap(heading)
    heading_rate = np.gradient(unwrapped, 0.02)
    yaw = np.cumsum(rate) * 0.02
    velocity = np.trapezoid(acc, dx=0.02)
    return {
        "rate": rate,
        "acc": acc,
        "heading": unwrapped,
        "heading_rate": heading_rate,
        "yaw": yaw,
        "velocity": np.atleast_1d(velocity),
    }


# ------------------------------------------------------------------ robust normalisation
def robust_normalise(samples):  # noqa: ANN001, ANN201
    """Sensor dropouts as NaN: fill with the channel mean, percentile scale, median/MAD."""
    mean = np.nanmean(samples, axis=0)
    filled = np.where(np.isnan(samples), mean, samples)
    lo, hi = np.percentile(filled, [5, 95], axis=0)
    scaled = np.clip((filled - lo) / (hi - lo + 1e-9), 0.0, 1.0)
    med = np.median(filled, axis=0)
    mad = np.median(np.abs(filled - med), axis=0)
    robust = np.nan_to_num((filled - med) / (1.4826 * mad), posinf=10.0, neginf=-10.0)
    return {"scaled": scaled, "robust": robust}


# ------------------------------------------------------------------ histogram features
_EDGES = np.linspace(-3.0, 3.0, 9)


def histogram_features(values, lookup):  # noqa: ANN001, ANN201
    """Fixed-range histogram, digitize into bins, searchsorted in a calibration table."""
    counts, _ = np.histogram(values, bins=8, range=(-3.0, 3.0))
    cells = np.digitize(values, _EDGES)
    occupancy = np.bincount(cells, minlength=len(_EDGES) + 1)
    position = np.searchsorted(np.sort(lookup), values)
    order = np.argsort(values)[:5]
    top = np.partition(values, -3)[-3:]
    return {
        "counts": counts,
        "occupancy": occupancy,
        "position": position,
        "order": order,
        "top": np.sort(top),
    }


# ------------------------------------------------------------------ observation history
class ObservationHistory:
    """A robot policy's frame stack: ``np.roll`` then write the newest row."""

    def __init__(self, length: int, dim: int) -> None:
        self.buffer = np.zeros((length, dim))
        self.count = 0

    def reset(self, first):  # noqa: ANN001, ANN201
        self.buffer = np.tile(first, (self.buffer.shape[0], 1))

    def push(self, obs):  # noqa: ANN001, ANN201
        self.buffer = np.roll(self.buffer, -1, axis=0)
        self.buffer[-1] = obs
        self.count += 1
        return self.buffer.flatten()


class IndexRing:
    """The same history as index arithmetic: write at ``head``, read oldest first."""

    def __init__(self, length: int, dim: int) -> None:
        self.data = np.zeros((length, dim), dtype=np.float32)
        self.head = 0

    def push(self, obs):  # noqa: ANN001, ANN201
        self.data[self.head] = obs
        self.head = (self.head + 1) % self.data.shape[0]
        order = (np.arange(self.data.shape[0]) + self.head) % self.data.shape[0]
        return self.data[order].reshape(-1)


def observation_history(obs_seq):  # noqa: ANN001, ANN201
    """Four steps of a policy loop; both ring buffers hold the last three frames."""
    history = ObservationHistory(3, obs_seq.shape[1])
    ring = IndexRing(3, obs_seq.shape[1])
    history.reset(obs_seq[0])
    stacked = flat = None
    for step in range(obs_seq.shape[0]):
        stacked = history.push(obs_seq[step])
        flat = ring.push(obs_seq[step])
    return {"stacked": stacked, "ring": flat}


# ------------------------------------------------------------------ spectral EMG features
def spectral_features(window):  # noqa: ANN001, ANN201
    """Mean and median frequency, spectral roll-off, peak frequency per channel."""
    rate = 1000.0
    spectrum = np.abs(np.fft.rfft(window, axis=0)) ** 2
    freqs = np.fft.rfftfreq(window.shape[0], d=1.0 / rate)
    total = np.sum(spectrum, axis=0)
    mean_freq = np.sum(freqs[:, None] * spectrum, axis=0) / total
    cumulative = np.cumsum(spectrum, axis=0)
    median_freq = freqs[np.argmax(cumulative >= total / 2, axis=0)]
    rolloff = freqs[np.argmax(cumulative >= 0.85 * total, axis=0)]
    peak = freqs[np.argmax(spectrum, axis=0)]
    return {"mnf": mean_freq, "mdf": median_freq, "rolloff": rolloff, "peak": peak}


# ------------------------------------------------------------------ one-euro filter
def _smoothing_factor(t_e, cutoff):  # noqa: ANN001, ANN202
    r = 2 * np.pi * cutoff * t_e
    return r / (r + 1)


def _exp_smooth(a, x, x_prev):  # noqa: ANN001, ANN202
    return a * x + (1 - a) * x_prev


class OneEuro:
    """The vectorised one-euro filter: state kept on ``self`` between calls."""

    def __init__(self, x0, min_cutoff=1.0, beta=0.05, d_cutoff=1.0) -> None:  # noqa: ANN001
        self.min_cutoff = np.full(x0.shape, min_cutoff)
        self.beta = np.full(x0.shape, beta)
        self.d_cutoff = np.full(x0.shape, d_cutoff)
        self.x_prev = x0.astype(np.float64)
        self.dx_prev = np.full(x0.shape, 0.0)

    def __call__(self, x, t_e=1 / 30):  # noqa: ANN001, ANN204
        t_e = np.full(x.shape, t_e)
        a_d = _smoothing_factor(t_e, self.d_cutoff)
        dx = (x - self.x_prev) / t_e
        dx_hat = _exp_smooth(a_d, dx, self.dx_prev)
        cutoff = self.min_cutoff + self.beta * np.abs(dx_hat)
        a = _smoothing_factor(t_e, cutoff)
        x_hat = _exp_smooth(a, x, self.x_prev)
        self.x_prev = x_hat
        self.dx_prev = dx_hat
        return x_hat


def one_euro_joints(joints):  # noqa: ANN001, ANN201
    """Keypoints / joint angles over time filtered frame by frame."""
    first, *rest = joints
    filt = OneEuro(first)
    out = [first.astype(np.float64)]
    for frame in rest:
        out.append(filt(frame))
    return {"smoothed": np.stack(out)}


# ------------------------------------------------------------------ Kalman filter
class Kalman:
    """filterpy-style constant-velocity filter: matrices on ``self``, dot and inv."""

    def __init__(self, dt: float) -> None:
        self.x = np.zeros((4, 1))
        self.P = np.eye(4) * 10.0
        self.F = np.eye(4)
        self.F[0, 2] = self.F[1, 3] = dt
        self.H = np.zeros((2, 4))
        self.H[0, 0] = self.H[1, 1] = 1.0
        self.Q = np.eye(4) * 0.01
        self.R = np.eye(2) * 0.5
        self._I = np.eye(4)

    def predict(self) -> None:
        self.x = np.dot(self.F, self.x)
        self.P = np.dot(np.dot(self.F, self.P), self.F.T) + self.Q

    def update(self, z):  # noqa: ANN001, ANN201
        z = np.atleast_2d(z)
        if z.shape[1] == 2:
            z = z.T
        y = z - np.dot(self.H, self.x)
        pht = np.dot(self.P, self.H.T)
        s = np.dot(self.H, pht) + self.R
        k = np.dot(pht, np.linalg.inv(s))
        self.x = self.x + np.dot(k, y)
        i_kh = self._I - np.dot(k, self.H)
        self.P = np.dot(np.dot(i_kh, self.P), i_kh.T) + np.dot(np.dot(k, self.R), k.T)


def kalman_track(measurements):  # noqa: ANN001, ANN201
    kf = Kalman(0.1)
    states = []
    for z in measurements:
        kf.predict()
        kf.update(z)
        states.append(kf.x[:, 0].copy())
    return {"states": np.array(states), "cov": np.diag(kf.P)}


# ------------------------------------------------------------------ table
def _r(shape, rng, low=-1.0, high=1.0):  # noqa: ANN001, ANN202
    return rng.uniform(low, high, size=shape).astype(np.float32)


def _ecg(rng):  # noqa: ANN001, ANN202
    t = np.arange(120) / 120.0
    beat = np.exp(-(((t * 3) % 1 - 0.5) ** 2) / 0.002)
    return (beat + 0.05 * rng.normal(size=120)).astype(np.float64)


def _heading(rng):  # noqa: ANN001, ANN202
    return np.angle(np.exp(1j * np.cumsum(rng.uniform(0.2, 0.6, size=40)))).astype(np.float64)


def _with_dropouts(rng):  # noqa: ANN001, ANN202
    x = rng.normal(size=(30, 4))
    x[rng.integers(0, 30, size=5), rng.integers(0, 4, size=5)] = np.nan
    return x


P = harness.Pipeline
PIPELINES = [
    P("speech_mfcc", speech_mfcc, lambda r: {"signal": r.normal(size=400)}),
    P("log_mel", log_mel, lambda r: {"waveform": r.normal(size=256).astype(np.float32)}),
    P("emg_features", emg_features, lambda r: {"emg": _r((100, 4), r)}),
    P("qrs_frontend", qrs_frontend, lambda r: {"ecg": _ecg(r)}),
    P("savgol_smooth", savgol_smooth, lambda r: {"signal": r.normal(size=50)}),
    P("biquad_filtfilt", biquad_filtfilt, lambda r: {"x": r.normal(size=60)}),
    P(
        "imu_calibration",
        imu_calibration,
        lambda r: {
            "gyro_z": r.normal(0, 0.1, size=40),
            "acc_x": r.normal(0, 2, size=40),
            "temperature": r.uniform(-5, 55, size=40),
            "heading": _heading(r),
        },
    ),
    P("robust_normalise", robust_normalise, lambda r: {"samples": _with_dropouts(r)}),
    P(
        "histogram_features",
        histogram_features,
        lambda r: {"values": r.normal(size=32), "lookup": r.normal(size=12)},
    ),
    P("observation_history", observation_history, lambda r: {"obs_seq": _r((4, 5), r)}),
    P("spectral_features", spectral_features, lambda r: {"window": r.normal(size=(64, 3))}),
    P("one_euro_joints", one_euro_joints, lambda r: {"joints": _r((6, 4), r)}),
    P("kalman_track", kalman_track, lambda r: {"measurements": r.normal(size=(5, 2))}),
]


def main(names: list[str]) -> dict[str, dict[str, int]]:
    chosen = [p for p in PIPELINES if not names or p.name in names]
    return harness.run_table(chosen, "signal")


if __name__ == "__main__":
    main(sys.argv[1:])
