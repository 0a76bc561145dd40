# vmcpd: a Virtual MCP Server.  Plain make; see README.md.
#
#   make            build vmcpd and vmcpctl into build/
#   make SAN=1      the same with ASan+UBSan into build-san/
#   make check      unit + interop tests, plain and sanitizer builds
#   make deps       install missing Debian packages, npm ci the test tools
#   make install    FHS install (PREFIX, DESTDIR)
#   make bench      benchmarks (not tests); make bench-scale: the scale part
#   make chaos      the fault scripts' long form, with figures; make fuzz-long

PREFIX		?= /usr/local
SBINDIR		?= $(PREFIX)/sbin
MANDIR		?= $(PREFIX)/share/man
SYSCONFDIR	?= /etc
EXAMPLEDIR	?= $(PREFIX)/share/doc/vmcpd/examples
UNITDIR		?= /lib/systemd/system
STATEDIR	?= /var/lib/vmcpd

PKGS		= libevent_core libevent_extra libevent_openssl jansson lmdb \
		  yaml-0.1 libssl libcrypto libcurl hiredis

CC		?= cc
WARNINGS	= -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
		  -Wmissing-prototypes -Wpointer-arith -Wvla -Werror
PKG_CFLAGS	:= $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS	:= $(shell pkg-config --libs $(PKGS) 2>/dev/null)

SAN		?= 0
ifeq ($(SAN),1)
BUILD		?= build-san
OPT		= -O1 -g -fno-omit-frame-pointer \
		  -fsanitize=address,undefined -fno-sanitize-recover=all
LDSAN		= -fsanitize=address,undefined
else
BUILD		?= build
OPT		= -O2 -g -D_FORTIFY_SOURCE=2 -fstack-protector-strong
LDSAN		=
endif

CPPFLAGS	+= -I. -D_GNU_SOURCE -DVMCPD_SYSCONFDIR='"$(SYSCONFDIR)"'
CFLAGS		+= -std=c11 $(OPT) $(WARNINGS) $(PKG_CFLAGS) -MMD -MP
LDFLAGS		+= $(LDSAN)
LDLIBS		+= $(PKG_LIBS)

COMMON_SRCS	= $(wildcard shared/*.c proto/*.c)
VMCPD_SRCS	= $(wildcard master/*.c worker/*.c worker/*/*.c)
COMMON_OBJS	= $(COMMON_SRCS:%.c=$(BUILD)/obj/%.o) \
		  $(BUILD)/obj/config_embedded.o
VMCPD_OBJS	= $(VMCPD_SRCS:%.c=$(BUILD)/obj/%.o)
WORKER_OBJS	= $(filter $(BUILD)/obj/worker/%,$(VMCPD_OBJS))
VMCPCTL_OBJS	= $(BUILD)/obj/tools/vmcpctl.o $(BUILD)/obj/tools/vmcpctl_ops.o \
		  $(BUILD)/obj/tools/vmcpctl_links.o \
		  $(BUILD)/obj/tools/vmcpctl_pins.o

UNIT_SRCS	= $(wildcard tests/unit/test_*.c)
UNIT_BINS	= $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# drivers an interop test runs (tests/unit/drive_*.c), linked like a unit test
UNIT_DRIVERS	= $(patsubst tests/unit/%.c,$(BUILD)/tests/%,\
		  $(wildcard tests/unit/drive_*.c))

MANPAGES	= man/vmcpd.8 man/vmcpd.yaml.5 man/vmcpctl.8

all: $(BUILD)/vmcpd $(BUILD)/vmcpctl

# the console's script and style (worker/diag/console.c), compiled in
CONSOLE_ASSETS	= $(BUILD)/obj/console_js.o $(BUILD)/obj/console_css.o

$(BUILD)/vmcpd: $(VMCPD_OBJS) $(COMMON_OBJS) $(CONSOLE_ASSETS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/vmcpctl: $(VMCPCTL_OBJS) $(COMMON_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# etc/vmcpd.yaml compiled in: vmcpd runs on it when no file is given
$(BUILD)/obj/config_embedded.c: etc/vmcpd.yaml tools/embed.sh
	@mkdir -p $(@D)
	sh tools/embed.sh config_embedded etc/vmcpd.yaml > $@

$(BUILD)/obj/config_embedded.o: $(BUILD)/obj/config_embedded.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/console_%.c: worker/diag/console.% tools/embed.sh
	@mkdir -p $(@D)
	sh tools/embed.sh console_$* $< > $@

$(BUILD)/obj/console_%.o: $(BUILD)/obj/console_%.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# unit tests: each links its test file with the objects it exercises,
# taken from one archive of the shared, proto and worker objects: the
# linker pulls in only the members a test needs, so a new test_*.c needs
# no rule of its own
o = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
UNIT_LIB	= $(BUILD)/unit.a
$(UNIT_LIB): $(COMMON_OBJS) $(WORKER_OBJS) $(CONSOLE_ASSETS)
	rm -f $@
	$(AR) rcs $@ $^
$(BUILD)/tests/%: tests/unit/%.c $(UNIT_LIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) \
	    $(UNIT_LIB) $(LDLIBS) -lcmocka
# the stdio bridge standalone, for tests/interop/bridge.test.mjs
$(BUILD)/bridge-test: $(call o,$(wildcard master/bridge*.c) master/child.c \
	shared/log.c shared/ipc.c shared/httpcheck.c \
	$(wildcard shared/http_c*.c) shared/http_h1.c shared/http_url.c \
	$(wildcard proto/*.c)) \
	tests/unit/bridge_main.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) \
	    $(LDLIBS)

unit: $(UNIT_BINS) $(UNIT_DRIVERS) $(BUILD)/bridge-test

deps:
	sh tools/deps.sh

check: all unit
	sh tests/run.sh all

check-unit: unit
	sh tests/run.sh unit

check-interop: all $(UNIT_DRIVERS)
	sh tests/run.sh interop

check-man:
	mandoc -T lint -W warning $(MANPAGES)

fuzz:
	$(MAKE) -f tests/fuzz/Makefile

# two fuzzers at a time: the machines this runs on have two cores
FUZZ_JOBS	?= 2
# seconds per target (tests/run.sh passes its own; empty would mean forever)
FUZZ_TIME	?= 10
fuzz-smoke:
	$(MAKE) -j$(FUZZ_JOBS) -f tests/fuzz/Makefile run FUZZ_TIME=$(FUZZ_TIME)

# every fuzz target to FUZZ_RUNS (10M) executions: hours on two cores
FUZZ_RUNS	?= 10000000
fuzz-long:
	$(MAKE) -f tests/fuzz/Makefile long FUZZ_RUNS=$(FUZZ_RUNS)

# the long form of the fault scripts (make check runs the short one):
# kill -9 and SIGHUP under load for CHAOS_SECONDS (60) each, with wrk
# beside the node clients when it is installed; the figures printed as
# "chaos:" lines.  CHAOS_FUZZ=1 adds fuzz-long.
CHAOS_SECONDS	?= 60
chaos: all
	CHAOS_SECONDS=$(CHAOS_SECONDS) TEST_TIMEOUT=$$(( \
	    ($(CHAOS_SECONDS) * 2 + 120) * 1000 )) \
	    CHAOS_WRK=$$(command -v wrk >/dev/null && echo 1) \
	    sh tests/interop/run.sh tests/interop/chaos.test.mjs \
	    tests/interop/store.test.mjs | tee $(BUILD)/chaos.log | \
	    sed -n 's/^# chaos: /chaos: /p; s/^# \(pass\|fail\) /\1 /p'
	@grep -q '^# fail 0$$' $(BUILD)/chaos.log && \
	    ! grep -q '^not ok' $(BUILD)/chaos.log
	if [ "$(CHAOS_FUZZ)" = 1 ]; then $(MAKE) fuzz-long; fi

# throughput and latency against a direct backend and an nginx hop, then
# scale: 100k sessions and their sweep, views of 10k and 100k tools
# (bench-scale alone; SCALE_SIZE=small for a one-minute run), then a
# bearer token on every tools/call against none (tests/bench/auth.sh),
# then a shared rate limit against none (tests/bench/ratelimit.sh), then
# oidc, Cedar, rate limits and audit together against none, both
# revisions (tests/bench/authz.sh; make bench-authz alone), then
# tracing at samplingRate 1.0 and 0.05 against none (tests/bench/trace.sh;
# make bench-trace alone), then
# a 10-step composite's cost per step (tests/bench/composite.sh)
# its buckets in Redis against the state directory (tests/bench/redis.sh)
bench:
	sh tests/bench/run.sh
	sh tests/bench/scale.sh
	sh tests/bench/auth.sh
	sh tests/bench/ratelimit.sh
	sh tests/bench/authz.sh
	sh tests/bench/trace.sh
	sh tests/bench/composite.sh
	sh tests/bench/redis.sh

bench-authz:
	sh tests/bench/authz.sh

bench-redis:
	sh tests/bench/redis.sh

bench-trace:
	sh tests/bench/trace.sh

bench-scale:
	sh tests/bench/scale.sh

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(EXAMPLEDIR) \
	    $(DESTDIR)$(SYSCONFDIR)/vmcpd $(DESTDIR)$(UNITDIR)
	install -m 0755 $(BUILD)/vmcpd $(BUILD)/vmcpctl $(DESTDIR)$(SBINDIR)
	install -m 0644 man/vmcpd.8 man/vmcpctl.8 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 man/vmcpd.yaml.5 $(DESTDIR)$(MANDIR)/man5
	install -m 0644 etc/*.yaml etc/examples/*.yaml $(DESTDIR)$(EXAMPLEDIR)
	install -m 0644 etc/haproxy/vmcpd.cfg $(DESTDIR)$(EXAMPLEDIR)/haproxy.cfg
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    etc/vmcpd.service > $(DESTDIR)$(UNITDIR)/vmcpd.service
	test -e $(DESTDIR)$(SYSCONFDIR)/vmcpd/vmcpd.yaml || \
	    sed -e 's|stateDir: /var/lib/vmcpd|stateDir: $(STATEDIR)|' \
	    etc/service/vmcpd.yaml > $(DESTDIR)$(SYSCONFDIR)/vmcpd/vmcpd.yaml

run: all
	sh tools/demo.sh

clean:
	rm -rf build build-san build-fuzz

.PHONY: all unit deps check check-unit check-interop check-man fuzz fuzz-smoke \
	bench bench-scale bench-redis bench-authz bench-trace install run clean fuzz-long chaos

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
