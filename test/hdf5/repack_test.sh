#!/bin/sh
# h5repack and h5dump with the plugin (HDF5_PLUGIN_PATH set by ctest):
#   repack_test.sh H5_FILTER_TEST H5REPACK H5DUMP WORKDIR
set -eu
tool=$1 h5repack=$2 h5dump=$3 work=$4
h5diff=$(dirname "$h5repack")/h5diff   # hdf5-tools installs it beside h5repack
fail() { echo "FAIL: $*"; exit 1; }

rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$tool" make-input in.h5
set -- $("$tool" eb-words 1e-3)
lo=$1 hi=$2

# each codec: 1 fixed-length, 2 Huffman, 0 auto
for codec in 1 2 0; do
    "$h5repack" -f UD=33900,0,4,$codec,0,"$lo","$hi" in.h5 out$codec.h5 ||
        fail "h5repack -f UD=33900,0,4,$codec,... failed"
    "$h5dump" -pH out$codec.h5 > dump$codec.txt || fail "h5dump -pH out$codec.h5 failed"
    grep -q "FILTER_ID 33900" dump$codec.txt || fail "h5dump does not show filter 33900 (codec $codec)"
    grep -q "COMMENT h5zgpu" dump$codec.txt || fail "h5dump does not name the filter h5zgpu (codec $codec)"
    grep -q "PARAMS { $codec 0 " dump$codec.txt || fail "h5dump does not show codec $codec in the filter's values"
    [ "$(wc -c < out$codec.h5)" -lt "$(wc -c < in.h5)" ] || fail "out$codec.h5 is not smaller than in.h5"
    # h5dump decodes every chunk: the values it prints must be numbers
    "$h5dump" -d /f32_3d -w 0 out$codec.h5 > values$codec.txt || fail "h5dump cannot read out$codec.h5"
    if grep -qi "nan\|inf" values$codec.txt; then fail "h5dump printed NaN/Inf from out$codec.h5"; fi

    "$h5repack" -f NONE out$codec.h5 back$codec.h5 || fail "h5repack -f NONE failed (codec $codec)"
    "$tool" compare in.h5 back$codec.h5 1e-3 ||
        fail "values restored by h5repack -f NONE miss ABS 1e-3 (codec $codec)"

    # repacking a compressed file again decompresses and compresses every chunk: in ABS and
    # PWREL (mode 0 and 2) the values must not move, however often it is done
    for mode in 0 2; do
        f=m$mode-$codec
        "$h5repack" -f UD=33900,0,4,$codec,$mode,"$lo","$hi" in.h5 $f-0.h5 &&
            "$h5repack" -f NONE $f-0.h5 $f-back0.h5 || fail "h5repack failed ($f)"
        for k in 1 2 3; do
            "$h5repack" -f UD=33900,0,4,$codec,$mode,"$lo","$hi" $f-$((k - 1)).h5 $f-$k.h5 ||
                fail "h5repack of an h5zgpu file failed (codec $codec, mode $mode, pass $k)"
            "$h5repack" -f NONE $f-$k.h5 $f-back$k.h5 || fail "h5repack -f NONE failed ($f-$k)"
            "$h5diff" $f-back0.h5 $f-back$k.h5 ||
                fail "values moved when h5repack compressed again (codec $codec, mode $mode, pass $k)"
        done
    done
done

# a filter refused at create (a bad H5ZGPU_DEVICE): h5repack copies the dataset with its
# original settings; our reason must reach the user through its warning and error stack
H5ZGPU_DEVICE=bogus "$h5repack" -v --enable-error-stack -f UD=33900,0,4,1,0,"$lo","$hi" in.h5 \
    refused.h5 > refused.txt 2>&1 || true
grep -q "could not create dataset" refused.txt ||
    fail "h5repack did not warn that it could not create a dataset with the filter"
grep -q "h5zgpu: H5ZGPU_DEVICE='bogus' is not auto, cpu, gpu or gpu:N" refused.txt ||
    fail "h5repack's error stack lacks our reason for refusing the filter"

# a damaged stored chunk: h5dump must exit non-zero with our message on the error stack
"$tool" corrupt corrupt.h5 > /dev/null || fail "could not make corrupt.h5"
if "$h5dump" --enable-error-stack corrupt.h5 > /dev/null 2> dump_err.txt; then
    fail "h5dump read a damaged chunk without error"
fi
grep -q "h5zgpu: cannot decompress a chunk" dump_err.txt || fail "h5dump's error stack lacks our message"
echo "repack_test: ok"
