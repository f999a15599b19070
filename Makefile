# gpupack: GNU Make build.
#
#   make                 build/gpupack (and build/gpupack-work when nvcc is found, and
#                        build/gpupack_spank.so, the Slurm plugin, when spank.h is found)
#   make check           unit + CLI tests, and the same tests in an ASan+UBSan build (one pool,
#                        TEST_JOBS at once; TEST_FLAGS=--timer: a per-file table)
#   make check-slurm     the Slurm plugin and the multi-node farm on a real Slurm brought up
#                        here (root; Debian's slurmctld, slurmd, munge: .ci/run installs them)
#   make torture         the lifecycle against 1,000,000 generated sequences (make torture-life),
#                        then random stops of the real farm, 1,000 trials (not in check; report in bench/results/)
#   make test            the tests once, in the normal build only (TESTS=tests/cli/x.t: some)
#   make farmsim         the farm over many simulated nodes (bench/farmsim.sh; tests/cli/farmsim.t a small one)
#   make install PREFIX=/usr/local DESTDIR=     (make uninstall with the same removes it)
#   make fuzz            build the libFuzzer harnesses (clang); make fuzz-run FUZZ_SECONDS=600
#   make B=build-x       build somewhere else (parallel builds in one tree must not share B)
#   make V=1             print each command (by default: one short line per file made)
#
# A plain `make` (or make all, spank) builds on every CPU unless given -j.

B        ?= build

V ?= 0
ifeq ($(V),1)
Q :=
say = @:
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
Q := @
say = @:
else
Q := @
say = @printf '  %-5s %s\n' '$(1)' '$(2)'
endif
NPROC := $(shell nproc 2>/dev/null || echo 2)
ifeq ($(MAKELEVEL)$(filter-out all spank work $(B)/%,$(MAKECMDGOALS)),0)
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(NPROC)
endif
endif
PREFIX   ?= /usr/local
CC       ?= cc
NVCC     ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
NVCCFLAGS ?= -O2 -arch=sm_90 -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 \
             -Xcompiler -Wall,-Wextra
VERSION  := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-unused-parameter -Wformat=2 -Wno-format-nonliteral
CFLAGS   ?= -O2 -g
ALL_CFLAGS := -std=c11 $(WARN) -D_GNU_SOURCE -DGPUPACK_VERSION='"$(VERSION)"' \
              $(CPPFLAGS) -DGPUPACK_DATADIR='"$(PREFIX)/share/gpupack"' -DGPUPACK_LIBEXECDIR='"$(PREFIX)/libexec/gpupack"' -Isrc -MMD -MP $(CFLAGS)
LIBS     := -ldl -lpthread -lm $(LDLIBS)

comma := ,
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# src/slurm/ is the Slurm plugin, not part of gpupack: built on its own below
SRCS     := $(sort $(shell find src -name '*.c' -not -path 'src/slurm/*'))
LIB_SRCS := $(filter-out src/main.c,$(SRCS))
OBJS     := $(SRCS:%.c=$(B)/%.o)
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o)

# The Slurm plugin: spank.c (the only file that needs spank.h) on top of the job
# logic in src/slurm/job*.c, which the tests and the GPU driver also link, and
# share/, gpu/, util/ compiled again as position-independent code, from an
# archive so that only what the plugin uses goes in. It exports the SPANK
# symbols alone (spank.map): nothing of ours can clash with slurmstepd's.
SPANK_H     ?= $(wildcard /usr/include/slurm/spank.h)
JOB_SRCS    := $(sort $(wildcard src/slurm/job*.c))
JOB_OBJS    := $(JOB_SRCS:%.c=$(B)/%.o)
PIC_SRCS    := $(sort $(wildcard src/share/*.c src/gpu/*.c src/util/*.c))
PIC_OBJS    := $(PIC_SRCS:%.c=$(B)/pic/%.o)
SPANK_SO    := $(B)/gpupack_spank.so

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:%.c=$(B)/%)
# small C helpers the shell tests run (the MPS control double, fake task programs)
TOOL_SRCS := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS := $(TOOL_SRCS:%.c=$(B)/%)
# Of them, the test doubles that link nothing of gpupack's: built alone and never instrumented
# (the sanitizers would check nothing of ours there, and an instrumented process costs 20 ms
# of CPU to start: thousands of them in the sanitizer pass). Others link the library as built.
TOOL_DOUBLES := $(addprefix $(B)/tests/tools/,fake-mps-client fake-mps-control fake-work farm-probe farm-task)
# the fake NVML (a test double of libnvidia-ml.so.1) that tests load through GPUPACK_NVML_LIB,
# and two builds of it with symbols left out (an old driver, a broken one)
FAKENVML := $(B)/tests/fakenvml/libnvidia-ml.so.1 $(B)/tests/fakenvml/old/libnvidia-ml.so.1 \
            $(B)/tests/fakenvml/broken/libnvidia-ml.so.1
FAKENVML_CC = $(CC) -std=c11 $(WARN) -Wno-missing-prototypes -D_GNU_SOURCE -Isrc -O1 -g -fPIC -shared \
              -fvisibility=hidden -pthread -Wl,-z,nodelete

# LD_PRELOAD shims the shell tests use to inject faults (a disk that fills up)
PRELOAD := $(B)/tests/preload/full-disk.so $(B)/tests/preload/no-fork.so

FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
# the CLI tests make valgrind runs gpupack under: devices, the farm, MPS (timing tests stay out:
# valgrind's slowness is not what they measure)
VALGRIND_CLI := tests/cli/devices.t tests/cli/run.t tests/cli/run-journal.t tests/cli/run-parallel.t \
                tests/cli/run-place.t tests/cli/run-shard.t tests/cli/run-mps.t tests/cli/mps.t \
                tests/cli/mps-exec.t tests/cli/usage.t
FUZZ_SECONDS ?= 600

all: $(B)/gpupack work $(if $(SPANK_H),$(SPANK_SO))

$(B)/gpupack: $(OBJS)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/tests/unit/%: tests/unit/%.c tests/unit/tap.h tests/unit/mig_fixture.h $(LIB_OBJS) $(JOB_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -Itests/unit -o $@ $< $(LIB_OBJS) $(JOB_OBJS) $(LIBS)

# the farm's lifecycle on a fake clock with fake processes: the link wraps what touches processes and time,
# and src/share's MPS layer (a fake MPS world: daemon, server, log; never a src/farm function)
LIFE_WRAPS := spawn_task kill waitpid wait4 poll clock_mono guard_start guard_task_started guard_task_ended \
              guard_mps_started guard_reaped guard_stop guard_sweep \
              proc_is proc_start_time host_task_cpu getpgid \
              mps_lookup mps_start mps_start_owned mps_use mps_used_by_others mps_stop mps_reset \
              mps_pid_alive mps_commands mps_servers mps_servers_free mps_terminate_client \
              mps_log_offset mps_fault_since mps_log_fatal_since mps_fault_culprit
$(B)/tests/unit/test_farm_life: tests/unit/test_farm_life.c tests/unit/tap.h $(LIB_OBJS) $(JOB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -Itests/unit $(addprefix -Wl$(comma)--wrap=,$(LIFE_WRAPS)) -o $@ $< \
	  $(LIB_OBJS) $(JOB_OBJS) $(LIBS)

# the simulated GPU's energy counter on a clock the test drives
$(B)/tests/unit/test_gpu_sim: tests/unit/test_gpu_sim.c tests/unit/tap.h $(LIB_OBJS) $(JOB_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -Itests/unit -Wl$(comma)--wrap=clock_mono -o $@ $< \
	  $(LIB_OBJS) $(JOB_OBJS) $(LIBS)

# farmsim (bench/farmsim.sh): one farm over many simulated nodes through the farm's real
# coordination code (nodes*.c, journal.c); the link wraps the clock, the joblog's lock and the
# file calls, which tests/tools/farmsim/simfs.c serves from an in-memory shared directory
FARMSIM_WRAPS := clock_mono joblock_take joblock_release open openat close read write pread lseek \
                 ftruncate fsync fdatasync fstat lstat stat fstatat access futimens symlink readlink \
                 mkdir unlink unlinkat rename renameat opendir readdir closedir nodes_slurm_ask
$(B)/tests/tools/farmsim: tests/tools/farmsim/farmsim.c tests/tools/farmsim/simfs.c tests/tools/farmsim/simfs.h \
                          $(LIB_OBJS) $(JOB_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -Itests/tools/farmsim $(addprefix -Wl$(comma)--wrap=,$(FARMSIM_WRAPS)) \
	  -o $@ tests/tools/farmsim/farmsim.c tests/tools/farmsim/simfs.c $(LIB_OBJS) $(JOB_OBJS) $(LIBS)
farmsim: $(B)/tests/tools/farmsim

# the simulated device that fake-work's farm tasks and the fake NVML share
$(B)/tests/tools/fake-work: tests/tools/fakedev.h
$(B)/tests/fakenvml/libnvidia-ml.so.1 $(B)/tests/fakenvml/old/libnvidia-ml.so.1: tests/tools/fakedev.h

# (CPPFLAGS and TOOL_LDFLAGS: a package's hardening, for the two that make install ships as the
# simulated machine's MPS stand-in; CFLAGS and LDFLAGS carry the sanitizer pass's flags)
$(TOOL_DOUBLES): $(B)/tests/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -std=c11 $(WARN) -D_GNU_SOURCE $(CPPFLAGS) -Isrc -O2 -g $(TOOL_LDFLAGS) -o $@ $< -lpthread -lm

$(B)/tests/tools/%: tests/tools/%.c $(LIB_OBJS) $(JOB_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(JOB_OBJS) $(LIBS)

$(B)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<

$(B)/pic/libgpupack.a: $(PIC_OBJS)
	$(Q)rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(SPANK_SO): $(B)/pic/src/slurm/spank.o $(JOB_SRCS:%.c=$(B)/pic/%.o) $(B)/pic/libgpupack.a src/slurm/spank.map
	$(call say,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -shared -fPIC -Wl,--version-script=src/slurm/spank.map \
	  $(LDFLAGS) -o $@ \
	  $(B)/pic/src/slurm/spank.o $(JOB_SRCS:%.c=$(B)/pic/%.o) $(B)/pic/libgpupack.a -ldl -lpthread -lm

spank: $(SPANK_SO)

# the job objects are only prerequisites of pattern rules: keep them (make would delete them)
.SECONDARY: $(JOB_OBJS)

# needs root and Debian's Slurm packages; tests/slurm/ brings its own cluster up and down
check-slurm: $(B)/gpupack $(SPANK_SO) $(TOOL_BINS) $(FAKENVML)
	GPUPACK=$(CURDIR)/$(B)/gpupack GPUPACK_BUILD=$(CURDIR)/$(B) GPUPACK_SRC=$(CURDIR) \
	  prove --exec tests/run-test $(PROVE_FLAGS) tests/slurm/*.t

# gpupack-work needs the CUDA toolkit; without it, say so and go on.
work:
	@if [ -n "$(NVCC)" ]; then \
	  $(MAKE) --no-print-directory $(if $(Q),-s) $(B)/gpupack-work; \
	else \
	  echo "note: nvcc not found: gpupack-work (the CUDA workloads) not built"; \
	fi

$(B)/gpupack-work: work/gpupack-work.cu
	@mkdir -p $(B)
	$(call say,NVCC,$@)
	$(Q)$(NVCC) $(NVCCFLAGS) -o $@ $< -lcublas

$(B)/tests/fakenvml/libnvidia-ml.so.1: tests/fakenvml/fakenvml.c src/gpu/nvml_api.h
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(FAKENVML_CC) -o $@ $<

$(B)/tests/fakenvml/old/libnvidia-ml.so.1: tests/fakenvml/fakenvml.c src/gpu/nvml_api.h
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(FAKENVML_CC) -DFAKENVML_OLD_ABI -o $@ $<

$(B)/tests/fakenvml/broken/libnvidia-ml.so.1: tests/fakenvml/fakenvml.c src/gpu/nvml_api.h
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(FAKENVML_CC) -DFAKENVML_NO_COUNT -o $@ $<

$(B)/tests/preload/%.so: tests/preload/%.c
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) -std=c11 $(WARN) -Wno-missing-prototypes -O1 -g -fPIC -shared -o $@ $< -ldl

# What the tests need: work is gpupack-work where nvcc is found (tests/cli/work.t skips without
# it), the Slurm plugin where spank.h is (tests/cli/install.t installs it).
TEST_DEPS = $(B)/gpupack $(UNIT_BINS) $(TOOL_BINS) $(B)/tests/tools/farmsim $(FAKENVML) $(PRELOAD) $(if $(SPANK_H),$(SPANK_SO)) work
# The test files: every unit test and CLI test (TESTS=... picks some: tests/cli/x.t, tests/unit/x.c).
CLI_TESTS := $(sort $(wildcard tests/cli/*.t))
TESTS ?= $(UNIT_SRCS) $(CLI_TESTS)
# The serial tier: files run after all others, one at a time, alone (the others run TEST_JOBS
# at once). Empty: every test holds with two busy loops beside it, so none needs the machine to
# itself. A file that measures the machine itself would go here (as its path: tests/cli/x.t).
SERIAL_TESTS :=
TEST_JOBS ?= $(shell echo $$(($(NPROC) + $(NPROC) / 2 + 1)))
# tests/harness's options (PROVE_FLAGS, its old name, too): --timer prints a per-file table
TEST_FLAGS ?= $(PROVE_FLAGS)
# what the tests need is built on every CPU, unless make was given -j
PAR_J = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))
test_files = $(patsubst tests/unit/%.c,$(1)/tests/unit/%,$(TESTS))
HARNESS = GPUPACK_SRC=$(CURDIR) perl tests/harness -j $(TEST_JOBS) $(TEST_FLAGS) \
          $(addprefix --serial ,$(SERIAL_TESTS))

test-deps: $(TEST_DEPS)

test:
	@$(MAKE) --no-print-directory $(PAR_J) test-deps
	@$(HARNESS) --times $(B)/test-times --pass $(B) $(call test_files,$(B))

# Both passes in one pool: the sanitizer build (without the Slurm plugin and gpupack-work, which
# it would not instrument) is made while the first pass's files run, its output in
# $(B)-san/build.log; then its files (with GPUPACK_TEST_PASS=san) join them.
check:
	@$(MAKE) --no-print-directory $(PAR_J) test-deps
	@$(HARNESS) --times $(B)/check-times --pass $(B) $(call test_files,$(B)) \
	  --pass $(B)-san:san --build $(B)-san/build.log \
	    '$(MAKE) --no-print-directory -j$(NPROC) test-deps B=$(B)-san SPANK_H= NVCC= CFLAGS="-O1 -g $(SAN_FLAGS)" LDFLAGS="$(SAN_FLAGS)"' \
	  $(call test_files,$(B)-san)

valgrind: $(B)/gpupack $(UNIT_BINS) $(TOOL_BINS) $(FAKENVML) $(PRELOAD)
	GPUPACK_VALGRIND=1 GPUPACK=$(CURDIR)/$(B)/gpupack GPUPACK_BUILD=$(CURDIR)/$(B) GPUPACK_SRC=$(CURDIR) \
	  prove --exec 'tests/valgrind-run' $(UNIT_BINS)
	GPUPACK_VALGRIND=1 GPUPACK="$(CURDIR)/tests/valgrind-run $(CURDIR)/$(B)/gpupack" GPUPACK_BUILD=$(CURDIR)/$(B) \
	  GPUPACK_SRC=$(CURDIR) prove --exec tests/run-test $(VALGRIND_CLI)

fuzz:
	$(MAKE) --no-print-directory B=build-fuzz CC=clang CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined" \
	  $(LIB_SRCS:%.c=build-fuzz/%.o) $(JOB_SRCS:%.c=build-fuzz/%.o)
	@for f in $(FUZZ_SRCS); do n=$$(basename $$f .c); \
	  echo "clang $$f -> build-fuzz/$$n"; \
	  clang -O1 -g -std=c11 -D_GNU_SOURCE -Isrc -fsanitize=fuzzer,address,undefined -o build-fuzz/$$n $$f \
	    $(LIB_SRCS:%.c=build-fuzz/%.o) $(JOB_SRCS:%.c=build-fuzz/%.o) -ldl -lpthread -lm || exit 1; done

# FUZZ=fuzz_topology picks one harness; each runs FUZZ_SECONDS on its seed corpus in tests/fuzz/<name>/
fuzz-run: fuzz
	@for f in $(if $(FUZZ),$(FUZZ),$(notdir $(FUZZ_SRCS:.c=))); do \
	  mkdir -p fuzz-out/$$f; \
	  build-fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 fuzz-out/$$f tests/fuzz/$$f || exit 1; \
	done

# the stand-ins a simulated machine uses (--sim): the MPS control daemon and a client that prints
# the limits it is held to, installed as PREFIX/libexec/gpupack/sim-mps-control, sim-mps-client
SIM_TOOLS := $(B)/tests/tools/fake-mps-control $(B)/tests/tools/fake-mps-client
ZSHDIR ?= $(PREFIX)/share/zsh/site-functions

install: $(B)/gpupack $(SIM_TOOLS) $(if $(SPANK_H),$(SPANK_SO))
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/gpupack/topologies \
	  $(DESTDIR)$(ZSHDIR) $(DESTDIR)$(PREFIX)/libexec/gpupack
	install -m 0755 $(B)/gpupack $(DESTDIR)$(PREFIX)/bin/gpupack
	if [ -f $(B)/gpupack-work ]; then install -m 0755 $(B)/gpupack-work $(DESTDIR)$(PREFIX)/bin/; fi
	install -m 0644 doc/gpupack.1 $(DESTDIR)$(PREFIX)/share/man/man1/gpupack.1
	install -m 0644 completion/gpupack.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gpupack
	install -m 0644 completion/_gpupack $(DESTDIR)$(ZSHDIR)/_gpupack
	install -m 0755 $(B)/tests/tools/fake-mps-control $(DESTDIR)$(PREFIX)/libexec/gpupack/sim-mps-control
	install -m 0755 $(B)/tests/tools/fake-mps-client $(DESTDIR)$(PREFIX)/libexec/gpupack/sim-mps-client
	install -m 0644 topologies/*.topo $(DESTDIR)$(PREFIX)/share/gpupack/topologies/
	if [ -f $(SPANK_SO) ]; then install -d $(DESTDIR)$(PREFIX)/lib/gpupack && \
	  install -m 0755 $(SPANK_SO) $(DESTDIR)$(PREFIX)/lib/gpupack/gpupack_spank.so; fi

# what install put there, and nothing else (the directories only when left empty)
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/gpupack $(DESTDIR)$(PREFIX)/bin/gpupack-work \
	  $(DESTDIR)$(PREFIX)/share/man/man1/gpupack.1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gpupack $(DESTDIR)$(ZSHDIR)/_gpupack \
	  $(DESTDIR)$(PREFIX)/libexec/gpupack/sim-mps-control $(DESTDIR)$(PREFIX)/libexec/gpupack/sim-mps-client
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/share/gpupack/topologies/,$(notdir $(wildcard topologies/*.topo)))
	rm -f $(DESTDIR)$(PREFIX)/lib/gpupack/gpupack_spank.so
	rmdir $(DESTDIR)$(PREFIX)/share/gpupack/topologies $(DESTDIR)$(PREFIX)/share/gpupack \
	  $(DESTDIR)$(PREFIX)/lib/gpupack $(DESTDIR)$(PREFIX)/libexec/gpupack 2>/dev/null || true

clean:
	rm -rf build build-san build-fuzz

# the farm's stops tortured (not part of check: about half an hour on 2 busy cores): the harness
# checks itself first (each injected fault must be seen), then TORTURE_TRIALS random trials; the
# report goes to bench/results/torture-stop-DATE.md (tests/torture/stop.sh says what is counted)
TORTURE_TRIALS ?= 1000
# the lifecycle against generated event sequences (tests/unit/test_farm_life.c): LIFE_N of them
LIFE_N ?= 1000000
torture-life: $(B)/tests/unit/test_farm_life
	GPUPACK_SRC=$(CURDIR) LIFE_N=$(LIFE_N) LIFE_JOBS=$(NPROC) LIFE_PROGRESS=50000 LIFE_VERBOSE=1 \
	  $(B)/tests/unit/test_farm_life

torture: torture-life $(B)/gpupack $(B)/tests/tools/farm-probe
	GPUPACK=$(CURDIR)/$(B)/gpupack GPUPACK_BUILD=$(CURDIR)/$(B) tests/torture/stop.sh --selftest
	GPUPACK=$(CURDIR)/$(B)/gpupack GPUPACK_BUILD=$(CURDIR)/$(B) tests/torture/stop.sh -n $(TORTURE_TRIALS) \
	  $(if $(TORTURE_SEED),-s $(TORTURE_SEED)) -o bench/results/torture-stop-$$(date -u +%Y-%m-%d).md

# mutation testing (not part of check or CI): MUTATE_FLAGS="-n 200 -s 13", see tests/mutate.sh
mutate:
	sh tests/mutate.sh $(MUTATE_FLAGS)


.PHONY: all work test-deps test check check-slurm farmsim spank valgrind fuzz fuzz-run install uninstall clean mutate torture torture-life

-include $(OBJS:.o=.d) $(LIB_SRCS:%.c=$(B)-san/%.d) $(JOB_OBJS:.o=.d) $(PIC_OBJS:.o=.d) \
  $(B)/pic/src/slurm/spank.d $(JOB_SRCS:%.c=$(B)/pic/%.d)
