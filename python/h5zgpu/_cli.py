"""The `h5zgpu` command of the Python package: runs the compiled tool it carries (h5zgpu/bin)."""
import os
import sys


def main():
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "h5zgpu")
    if not os.access(tool, os.X_OK):
        sys.exit(f"h5zgpu: {tool} is missing: this h5zgpu was installed without its compiled "
                 "parts (pip install the repository root, not python/)")
    os.execv(tool, [tool, *sys.argv[1:]])


if __name__ == "__main__":
    main()
