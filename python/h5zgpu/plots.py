"""The PNGs of `h5zgpu check --plot DIR` and `h5zgpu sweep --plot DIR` (matplotlib, drawn
without a display). Each function returns the paths it wrote."""
import os
import sys


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("h5zgpu: --plot needs matplotlib (pip install matplotlib, or Debian's "
                         "python3-matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(plt, fig, directory, name):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"h5zgpu: wrote {path}", file=sys.stderr)
    return path


def _middle_slice(x):
    """A 2-D view to show: the middle plane of the slowest axis, until two axes are left."""
    while x.ndim > 2:
        x = x[x.shape[0] // 2]
    return x


def check_plots(directory, got, a, b, a_name, b_name, band, kmax=0):
    """error_histogram.png, slice.png (original, reconstructed, error) and, for a cubic 3-D
    field, pk_ratio.png with the band 1 +- band and the largest shell judged (kmax; 0: all)."""
    import numpy as np
    plt = _pyplot()
    paths = []
    hist, lo, hi = got["error_histogram"], got["min_error"], got["max_error"]
    if hist and lo is not None and hi is not None:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        edges = np.linspace(lo, hi, len(hist) + 1)
        ax.stairs(hist, edges, fill=True)
        ax.set_xlabel("error (B - A)")
        ax.set_ylabel("points")
        ax.set_title(f"error of {b_name}: max |error| {got['max_abs_error']:.3g}")
        paths.append(_save(plt, fig, directory, "error_histogram.png"))
    sa, sb = _middle_slice(a.astype(np.float64)), _middle_slice(b.astype(np.float64))
    if sa.ndim == 2:
        fig, axes = plt.subplots(1, 3, figsize=(13, 4))
        lo_v, hi_v = np.nanmin(sa), np.nanmax(sa)
        for ax, img, title in ((axes[0], sa, f"original {a_name}"),
                               (axes[1], sb, f"reconstructed {b_name}"),
                               (axes[2], sb - sa, "error")):
            m = np.nanmax(np.abs(sb - sa)) or 1.0
            kw = {"vmin": -m, "vmax": m} if title == "error" else {"vmin": lo_v, "vmax": hi_v}
            im = ax.imshow(img, origin="lower", cmap="RdBu_r" if title == "error" else "viridis",
                           **kw)
            ax.set_title(title, fontsize=9)
            fig.colorbar(im, ax=ax, shrink=0.8)
    else:
        fig, ax = plt.subplots(figsize=(8, 3.5))
        ax.plot(sa, label=f"original {a_name}")
        ax.plot(sb, label=f"reconstructed {b_name}", linestyle="--")
        ax.legend(fontsize=8)
    paths.append(_save(plt, fig, directory, "slice.png"))
    if got.get("pk_ratio"):
        ratio = np.array(got["pk_ratio"], dtype=float)
        k = np.arange(1, len(ratio) + 1)
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.axhspan(1 - band, 1 + band, color="tab:green", alpha=0.3, label=f"1 +- {band:g}")
        ax.plot(k, ratio, marker=".", linewidth=1)
        ax.set_xscale("log")
        if ratio.min() > 0 and ratio.max() / ratio.min() > 10:
            ax.set_yscale("log")   # the smallest scales may be off by orders of magnitude
        judged = kmax if 0 < kmax < len(ratio) else len(ratio)
        if judged < len(ratio):
            ax.axvline(judged, color="k", linestyle=":", label=f"k = {judged}")
        ax.set_xlabel("k (shell of integer wavenumber)")
        ax.set_ylabel("P_B(k) / P_A(k)")
        ax.set_title(f"power spectrum ratio: max |ratio - 1| {got['pk_ratio_max_deviation']:.3g}"
                     f" over k = 1..{judged}", fontsize=10)
        ax.legend(fontsize=8)
        paths.append(_save(plt, fig, directory, "pk_ratio.png"))
    return paths


def sweep_plot(directory, got, name):
    """sweep.png: ratio against bound per codec, the tries that meet the criteria filled, the
    others hollow, each winner ringed."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for codec, color in (("fixed", "tab:blue"), ("huffman", "tab:orange"), ("auto", "tab:green")):
        tries = sorted((t for t in got["tries"] if t["codec"] == codec), key=lambda t: t["eb"])
        if not tries:
            continue
        ax.plot([t["eb"] for t in tries], [t["ratio"] for t in tries], color=color,
                linewidth=1, label=codec)
        for ok in (True, False):
            pts = [t for t in tries if t["accepted"] == ok]
            ax.scatter([t["eb"] for t in pts], [t["ratio"] for t in pts], color=color,
                       facecolors=color if ok else "none", zorder=3)
        win = got["winners"].get(codec)
        if win:
            ax.scatter([win["eb"]], [win["ratio"]], s=160, facecolors="none", edgecolors="k",
                       zorder=4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"{got['mode']} bound")
    ax.set_ylabel("ratio")
    c = got["criteria"]
    crit = ", ".join(f"{k} {c[k]:g}" for k in ("psnr", "ssim", "pk") if c.get(k) is not None)
    if c.get("pk") is not None and c.get("kmax"):
        crit += f" (k <= {c['kmax']})"
    ax.set_title(f"sweep of {name}: filled = meets {crit}; ringed = chosen", fontsize=9)
    ax.legend(fontsize=8)
    return [_save(plt, fig, directory, "sweep.png")]
