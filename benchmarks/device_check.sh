#!/bin/bash
# The GPU check of a session lent a device machine, as one prepared command: the judges on the
# device's default JAX device, the verifier on both devices, converted_speed.py and
# library_speed.py. The machine has JAX, NumPy, SciPy, rich and typer but no libcst and no
# network; prepare here, on the development machine, in the repository root:
#
#   mkdir -p .gpu/corpus .gpu/sem; cp ../shared/corpus/*.py .gpu/corpus; cp ../shared/corpus-semantics/*.py .gpu/sem
#   cp ../shared/tools/judge.py .gpu/                                   # the judge, not shipped
#   python benchmarks/library_speed.py prepare --work .gpu/libspeed    # only for STEPS=library
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl libcst==1.9.0 typer==0.28.0
#   echo /.gpu/ >> .git/info/exclude; echo /.whl/ >> .git/info/exclude
#
# then run `STEPS="judges verify speed" bash benchmarks/device_check.sh` there with .gpu and .whl
# carried (judges about 70 s on an H100 machine, verify 80 s, speed 330 s, library 150 s).
# Everything lands in $OUT/results.tgz, rebuilt after each step (the device returns at most
# eight files, and what a step that outlived the call's limit had written still comes back).
DEV=${DEV:-gpu}
STEPS=${STEPS:-judges verify speed}
PY=${PY:-python3}
OUT=${OUT:-/tmp/device_check}
RES=/tmp/device_check_results; rm -rf $RES; mkdir -p $RES $OUT
if [ -z "$LOCAL" ] && [ -d .whl ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
mkdir -p /tmp/bin; printf '#!/bin/sh\nexec %s -m np2jax "$@"\n' "$(command -v $PY)" > /tmp/bin/np2jax
chmod +x /tmp/bin/np2jax; export PATH=/tmp/bin:$PATH
pack() { tar czf $OUT/results.tgz -C $RES . ; }
{ nvidia-smi -L; git log -1 --format='np2jax %h %s' 2>/dev/null
  $PY -c "import jax, numpy, scipy, sys; print(sys.version.split()[0], 'jax', jax.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__, jax.devices())"
} > $RES/machine.txt 2>&1
cat $RES/machine.txt; pack
T0=$(date +%s)
for step in $STEPS; do
  T=$(date +%s)
  case $step in
    judges)  # six judges at once: the conversions use the CPU cores, the programs the GPU
      for d in corpus sem; do
        for mode in plain jit x32; do
          case $mode in plain) args=;; jit) args=--jit;; x32) args="-- --x32";; esac
          (cd /tmp && timeout 200 $PY $OLDPWD/.gpu/judge.py $OLDPWD/.gpu/$d $args > $RES/judge_${d}_$mode.txt 2>&1) &
        done
      done
      wait
      for f in $RES/judge_*; do echo "$(basename $f): $(tail -1 $f)"; done;;
    verify)
      np2jax convert .gpu/corpus --out /tmp/corpus_converted > /dev/null 2>&1
      timeout 150 np2jax verify .gpu/corpus /tmp/corpus_converted --devices all --repeat 3 --timeout 60 \
        > $RES/verify_corpus.txt 2>&1
      tail -2 $RES/verify_corpus.txt;;
    speed)
      for p in game_of_life heat_stencil image_filter kmeans mlp_training monte_carlo nbody; do
        timeout 90 $PY benchmarks/converted_speed.py --device $DEV --repeat 3 --timeout 60 ${SIZE:+--size $SIZE} \
          --only $p --json $RES/speed_$p.json > $RES/speed_$p.txt 2>&1
        echo "speed $p rc=$?"; pack
      done;;
    library)
      timeout ${LIBRARY_TIMEOUT:-300} $PY benchmarks/library_speed.py run --work .gpu/libspeed --device $DEV \
        --repeat 3 --timeout 100 --json $RES/library.json > $RES/library.txt 2>&1
      echo "library rc=$?";;
  esac
  echo "$step: $(( $(date +%s) - T )) s"; pack
done
echo "total $(( $(date +%s) - T0 )) s"
