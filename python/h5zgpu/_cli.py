"""The `h5zgpu` command of the Python package. `info` is answered here, through h5py (it reads
HDF5 files); every other subcommand runs the compiled tool the package carries (h5zgpu/bin)."""
import os
import sys


def main():
    if sys.argv[1:2] == ["info"]:
        from .info import main as info_main
        sys.exit(info_main(sys.argv[2:]))
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "h5zgpu")
    if not os.access(tool, os.X_OK):
        sys.exit(f"h5zgpu: {tool} is missing: this h5zgpu was installed without its compiled "
                 "parts (pip install the repository root, not python/); `python -m h5zgpu "
                 "info FILE` works without them")
    os.execv(tool, [tool, *sys.argv[1:]])


if __name__ == "__main__":
    main()
