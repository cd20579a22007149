#!/usr/bin/env bash
# On the device: unpack the carried OpenMPI and parallel-HDF5 .deb files (fetch-mpi-debs.sh)
# into /opt/mpideb, never into /, and print the environment that uses them, OpenMPI relocated
# there (OPAL_PREFIX) and run as root on one host over shared memory. Usage there:
#   eval "$(bash use-mpi-debs.sh .debs-mpi)"
# then configure with $H5ZGPU_MPI_CMAKE_FLAGS and launch with $MPIRUN.
set -eu
dir=${1:-.debs-mpi}
root=/opt/mpideb
if [ ! -x "$root/usr/bin/orterun" ]; then
  mkdir -p "$root"
  for f in "$dir"/*.deb; do dpkg -x "$f" "$root"; done
fi
lib=$root/usr/lib/x86_64-linux-gnu
echo "export PATH=$root/usr/bin:\$PATH"
echo "export LD_LIBRARY_PATH=$lib/openmpi/lib:$lib:$lib/hdf5/openmpi:\${LD_LIBRARY_PATH:-}"
echo "export OPAL_PREFIX=$root/usr OPAL_SYSCONFDIR=$root/etc/openmpi"
echo "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
# PMIx's own components, not those of a PMIx the machine may have under /usr
echo "export PMIX_MCA_mca_base_component_path=$lib/pmix2/lib/pmix"
echo "export PMIX_MCA_pcompress_base_silence_warning=1"
echo "export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none"
echo "export MPIRUN=$root/usr/bin/orterun"
echo "export H5ZGPU_MPI_CMAKE_FLAGS='-DMPI_C_COMPILER=$root/usr/bin/mpicc.openmpi \
-DMPIEXEC_EXECUTABLE=$root/usr/bin/orterun \
-DH5ZGPU_HDF5_MPI_INCLUDE=$root/usr/include/hdf5/openmpi \
-DH5ZGPU_HDF5_MPI_LIB=$lib/hdf5/openmpi/libhdf5.so'"
