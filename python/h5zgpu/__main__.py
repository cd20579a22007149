"""python -m h5zgpu: the package's `h5zgpu` command."""
from ._cli import main

main()
