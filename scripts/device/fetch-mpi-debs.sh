#!/usr/bin/env bash
# Download Debian's OpenMPI and MPI-parallel HDF5 (runtime, headers, mpirun and the libraries
# they load) as .deb files into DIR (default .debs-mpi/), to carry to the GPU device, which has
# no MPI: nyx_writer and the MPI tests run there with them (use-mpi-debs.sh). Run here, on the
# development machine. Add DIR to .git/info/exclude and name it in `carry` (about 12 MB).
set -eu
dir=${1:-.debs-mpi}
mkdir -p "$dir"
cd "$dir"
apt-get update -qq >/dev/null 2>&1 || true
apt-get download -qq openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev \
  libhdf5-openmpi-103-1 libhdf5-openmpi-dev libevent-2.1-7 libevent-core-2.1-7 \
  libevent-pthreads-2.1-7 libhwloc15 libpmix2 libfabric1 libucx0 libibverbs1 librdmacm1 \
  libnl-3-200 libnl-route-3-200 libnuma1 libpsm2-2 libpsm-infinipath1 libmunge2 libxnvctrl0 \
  libpciaccess0 libltdl7 2>&1 | grep -v '^Get:\|unsandboxed' || true
ls -1 *.deb
