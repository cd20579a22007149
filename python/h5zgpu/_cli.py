"""The `h5zgpu` command of the Python package. `info` is answered here, through h5py (it reads
HDF5 files); so are `check` and `sweep` when a field is an HDF5 dataset (FILE.h5:/dataset) or
plots are asked for (--plot), around the compiled tool (quality.py). Everything else runs the
compiled tool the package carries (h5zgpu/bin), or H5ZGPU_BIN's."""
import os
import sys


def _tool():
    explicit = os.environ.get("H5ZGPU_BIN")
    if explicit:
        return explicit
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "h5zgpu")


def _needs_python(args):
    from .quality import dataset_spec
    return "--plot" in args or "--original" in args or any(dataset_spec(a) for a in args)


def main():
    cmd, args = sys.argv[1:2], sys.argv[2:]
    if cmd == ["info"]:
        from .info import main as info_main
        sys.exit(info_main(args))
    tool = _tool()
    if not os.access(tool, os.X_OK):
        sys.exit(f"h5zgpu: {tool} is missing: this h5zgpu was installed without its compiled "
                 "parts (pip install the repository root, not python/); `python -m h5zgpu "
                 "info FILE` works without them")
    if cmd in (["check"], ["sweep"]) and _needs_python(args):
        from . import quality
        sys.exit((quality.check if cmd == ["check"] else quality.sweep)(args, tool))
    os.execv(tool, [tool, *sys.argv[1:]])


if __name__ == "__main__":
    main()
