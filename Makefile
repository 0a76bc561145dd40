# vmcpd: a Virtual MCP Server.  Plain make; see README.md.
#
#   make            build vmcpd and vmcpctl into build/
#   make SAN=1      the same with ASan+UBSan into build-san/
#   make check      unit + interop tests, plain and sanitizer builds
#   make deps       install missing Debian packages, npm ci the test tools
#   make install    FHS install (PREFIX, DESTDIR)

PREFIX		?= /usr/local
SBINDIR		?= $(PREFIX)/sbin
MANDIR		?= $(PREFIX)/share/man
SYSCONFDIR	?= /etc
EXAMPLEDIR	?= $(PREFIX)/share/doc/vmcpd/examples
UNITDIR		?= /lib/systemd/system
STATEDIR	?= /var/lib/vmcpd

PKGS		= libevent_core libevent_extra libevent_openssl jansson lmdb \
		  yaml-0.1 libssl libcrypto libcurl

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
VMCPD_SRCS	= $(wildcard master/*.c worker/*.c)
COMMON_OBJS	= $(COMMON_SRCS:%.c=$(BUILD)/obj/%.o) \
		  $(BUILD)/obj/config_embedded.o
VMCPD_OBJS	= $(VMCPD_SRCS:%.c=$(BUILD)/obj/%.o)
WORKER_OBJS	= $(filter $(BUILD)/obj/worker/%,$(VMCPD_OBJS))
VMCPCTL_OBJS	= $(BUILD)/obj/tools/vmcpctl.o

UNIT_SRCS	= $(wildcard tests/unit/test_*.c)
UNIT_BINS	= $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

MANPAGES	= man/vmcpd.8 man/vmcpd.yaml.5 man/vmcpctl.8

all: $(BUILD)/vmcpd $(BUILD)/vmcpctl

$(BUILD)/vmcpd: $(VMCPD_OBJS) $(COMMON_OBJS)
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

# unit tests: each links its test file with the objects it exercises
o = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
$(BUILD)/tests/%: tests/unit/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) \
	    $(LDLIBS) -lcmocka
$(BUILD)/tests/test_config: $(call o,shared/config.c shared/log.c) \
	$(BUILD)/obj/config_embedded.o
$(BUILD)/tests/test_store: $(call o,shared/store.c shared/log.c)
$(BUILD)/tests/test_jsonrpc: $(call o,$(wildcard proto/*.c) shared/log.c)
$(BUILD)/tests/test_sse: $(call o,$(wildcard proto/*.c) shared/log.c)
$(BUILD)/tests/test_jsonspan: $(call o,$(wildcard proto/*.c) shared/log.c)
$(BUILD)/tests/test_jsonrpc_scan: $(call o,$(wildcard proto/*.c) shared/log.c)
$(BUILD)/tests/test_http_req: $(call o,proto/http_req.c proto/headers.c)
$(BUILD)/tests/test_uritemplate: $(call o,proto/uritemplate.c)
$(BUILD)/tests/test_wake: $(call o,worker/wake.c shared/paths.c shared/log.c)
$(BUILD)/tests/test_http_client: $(call o,shared/http_client.c \
	shared/http_h1.c shared/log.c proto/headers.c)
$(BUILD)/tests/test_session: $(call o,worker/session.c shared/store.c \
	shared/log.c $(wildcard proto/*.c))
# the stdio bridge standalone, for tests/interop/bridge.test.mjs
$(BUILD)/bridge-test: $(call o,$(wildcard master/bridge*.c) master/child.c \
	shared/log.c shared/ipc.c shared/httpcheck.c shared/http_client.c \
	shared/http_h1.c $(wildcard proto/*.c)) \
	tests/unit/bridge_main.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) \
	    $(LDLIBS)
$(BUILD)/tests/test_view: $(call o,worker/view_build.c \
	worker/view_layout.c shared/log.c \
	$(wildcard proto/*.c))
$(BUILD)/tests/test_modern: $(call o,$(wildcard proto/*.c) shared/log.c)

unit: $(UNIT_BINS) $(BUILD)/bridge-test

deps:
	sh tools/deps.sh

check: all unit
	sh tests/run.sh all

check-unit: unit
	sh tests/run.sh unit

check-interop: all
	sh tests/run.sh interop

check-man:
	mandoc -T lint -W warning $(MANPAGES)

fuzz:
	$(MAKE) -f tests/fuzz/Makefile

fuzz-smoke:
	$(MAKE) -f tests/fuzz/Makefile run FUZZ_TIME=$(FUZZ_TIME)

# throughput and latency against a direct backend and an nginx hop
bench:
	sh tests/bench/run.sh

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(EXAMPLEDIR) \
	    $(DESTDIR)$(SYSCONFDIR)/vmcpd $(DESTDIR)$(UNITDIR)
	install -m 0755 $(BUILD)/vmcpd $(BUILD)/vmcpctl $(DESTDIR)$(SBINDIR)
	install -m 0644 man/vmcpd.8 man/vmcpctl.8 $(DESTDIR)$(MANDIR)/man8
	install -m 0644 man/vmcpd.yaml.5 $(DESTDIR)$(MANDIR)/man5
	install -m 0644 etc/*.yaml etc/examples/*.yaml $(DESTDIR)$(EXAMPLEDIR)
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    etc/vmcpd.service > $(DESTDIR)$(UNITDIR)/vmcpd.service
	test -e $(DESTDIR)$(SYSCONFDIR)/vmcpd/vmcpd.yaml || \
	    sed -e 's|stateDir: ./var|stateDir: $(STATEDIR)|' etc/vmcpd.yaml \
	    > $(DESTDIR)$(SYSCONFDIR)/vmcpd/vmcpd.yaml

run: all
	sh tools/demo.sh

clean:
	rm -rf build build-san build-fuzz

.PHONY: all unit deps check check-unit check-interop check-man fuzz fuzz-smoke \
	bench install run clean

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
