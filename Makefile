# cairn: build, test, install.
#
#   make            library (build/libcairn.a, build/libcairn.so) and CLI (build/cairn)
#   make test       unit tests and black-box CLI tests (tests/run.sh)
#   make check      the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make valgrind   unit tests under valgrind
#   make bench      benchmarks (bench/), each against a baseline in the same run
#   make eval       regenerate docs/results from ../shared/data
#   make fuzz       short fuzz runs of every parser (clang libFuzzer)
#   make deps       install the Debian packages we build with (scripts/deps.sh)
#   make install PREFIX=/usr/local   (also the man page and bash/zsh completions)
#
# Sources are found by folder: every src/*/*.c is in the library, every
# cli/*.c in the CLI, every tests/unit/test_*.c is one test program.

PREFIX  ?= /usr/local
BUILD   ?= build
CC      ?= cc
PKGS     = sqlite3 libcjson libutf8proc
# Loaded at run time with dlopen on first use (src/util/dl.h), not linked:
# their load-time constructors cost ~12 ms per process, paid by every hook
# (libmicrohttpd brings GnuTLS; only `cairn web` uses it; libpq brings
# libssl, Kerberos and LDAP; only `cairn sync` and `doctor --server` use it).
# zlib unpacks a downloaded model's .tar.gz, nothing else, and libpcre2-8
# masks secrets on a write (the prompt hook's path masks nothing): linked,
# each one's loading cost every hook ~0.3 ms (issue 23, hook53).
# Their headers are used at build time; only tests and benchmarks that call
# them directly link them (DL_LIBS).
DL_PKGS  = openblas libzip libcurl libmicrohttpd libpq zlib libpcre2-8
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) $(DL_PKGS) 2>/dev/null)
# libstemmer has no .pc file. With Debian's archive of it (libstemmer-dev)
# the English stemmer's objects are linked, alone, into whatever links
# the library (src/text/stem.h: libstemmer.so's other 29 languages cost
# every process ~10,800 relocations at start); without it, -lstemmer.
# STEM=so forces the shared library.
STEM_A   := $(shell $(CC) -print-file-name=libstemmer.a 2>/dev/null)
STEM     ?= $(if $(filter /%,$(STEM_A)),a,so)
STEM_LIBS = $(if $(filter a,$(STEM)),-l:libstemmer.a,-lstemmer)
STEM_DEF  = $(if $(filter a,$(STEM)),-DCAIRN_STEM_EN,)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) $(STEM_LIBS) -lpthread -lm
DL_LIBS    := $(shell pkg-config --libs $(DL_PKGS) 2>/dev/null)

# -Wno-format-truncation: gcc flags bounded snprintf of paths only at some
# optimisation levels (it broke the -O1 sanitizer build but not -O2);
# paths longer than PATH_MAX are refused where they are built.
WARN     = -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2 -Wno-format-truncation
OPT     ?= -O2 -g
CFLAGS  ?=
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -fPIC -Iinclude -Isrc $(PKG_CFLAGS) $(STEM_DEF) $(CFLAGS) $(SAN)
LDFLAGS ?=

LIB_SRC  := $(sort $(wildcard src/*.c src/*/*.c))
CLI_SRC  := $(sort $(wildcard cli/*.c cli/*/*.c))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRC:= $(sort $(wildcard bench/*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/web_assets.o
# The page `cairn web` serves, embedded in the binary (docs/WEB.md).
WEB_ASSETS := $(sort $(wildcard cli/web/assets/*))
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN:= $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)

.PHONY: all test check valgrind bench eval fuzz deps install clean demo

all: $(BUILD)/libcairn.a $(BUILD)/libcairn.so $(BUILD)/cairn

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# The library exports only what include/cairn.h marks CAIRN_API
# (tests/t/t0502-exports.sh). The CLI, tests and benchmarks link the static
# archive, where hidden symbols still resolve between objects.
$(LIB_OBJ): ALL_CFLAGS += -fvisibility=hidden

$(BUILD)/libcairn.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# --exclude-libs: the archive's symbols (STEM=a) stay inside the library.
$(BUILD)/libcairn.so: $(LIB_OBJ)
	$(CC) -shared -Wl,--exclude-libs,libstemmer.a -o $@ $^ $(LDFLAGS) $(PKG_LIBS) $(SAN)

$(BUILD)/gen/web_assets.c: $(WEB_ASSETS) scripts/embed-assets.sh
	@mkdir -p $(dir $@)
	sh scripts/embed-assets.sh $@ $(WEB_ASSETS)

$(BUILD)/gen/web_assets.o: $(BUILD)/gen/web_assets.c cli/web/web.h
	$(CC) $(ALL_CFLAGS) -Icli/web -c $< -o $@

# Every hook is a new `cairn` process, so what the loader does before main
# is paid per prompt (bench/README.md "Process start"). libstemmer.so's
# stemmer tables hold 10,821 pointers that a position-independent process
# relocates at each start (81 pages copied on write): linking only the
# English stemmer's objects of the archive (STEM above) leaves 112 of
# them, in a binary still position-independent. CLI_STATIC links the
# archives it names into a binary that is not position-independent
# (make CLI_STATIC=stemmer: the pointers of the binary's own code resolved
# once by the linker). Off by default: such a binary loses address
# randomisation of its own code, and cairn parses untrusted files.
# CLI_STATIC="stemmer sqlite3 pcre2-8 utf8proc z" also drops four libraries'
# loading (`cairn --version` 4.9 against 8.8 ms CPU on the AVX2 host), but
# then a Debian security update of those libraries needs a rebuild of cairn.
# SQLITE=a links Debian's libsqlite3.a (libsqlite3-dev) into the CLI and
# keeps it position-independent: libsqlite3.so binds 1,596 of its own
# symbols at each start (Debian builds it with BIND_NOW, and its calls to
# its exported functions go through its GOT), 1,772 symbol relocations a
# process against 206; the hook's CPU 0.94x at 100,000 messages, 0.93x at
# a million (bench/README.md, "The hook at 100,000", issue 23, hook51).
# Off by default for the reason CLI_STATIC is: a Debian security update
# of SQLite would then need a rebuild of cairn.
SQLITE     ?= so
CLI_STATIC ?=
CLI_DROP    = $(CLI_STATIC:%=-l%) $(if $(filter a,$(SQLITE)),-lsqlite3,)
CLI_LIBS    = $(if $(filter a,$(SQLITE)),$(if $(filter sqlite3,$(CLI_STATIC)),,-l:libsqlite3.a),) \
              $(filter-out $(CLI_DROP),$(PKG_LIBS)) $(CLI_STATIC:%=-l:lib%.a)
CLI_PIE     = $(if $(strip $(CLI_STATIC)),-no-pie,)

$(BUILD)/cairn: $(CLI_OBJ) $(BUILD)/libcairn.a
	$(CC) $(CLI_PIE) -o $@ $(CLI_OBJ) $(BUILD)/libcairn.a $(LDFLAGS) $(CLI_LIBS) $(SAN)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libcairn.a $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(BUILD)/libcairn.a $(LDFLAGS) $(PKG_LIBS) $(DL_LIBS)

# test_recall_nomem fails the ranking's allocations one at a time: it
# wraps the two ranking entry points to know when it is inside them.
$(BUILD)/tests/test_recall_nomem: LDFLAGS += -Wl,--wrap=rank_default,--wrap=rank_raw_bm25

# Every fuzz target, built with this compiler and WARN and a plain main
# that replays files (tests/fuzz/replay.c), so `make test` fails when one
# stops building (`make fuzz` needs clang and is run by hand), and t0513
# replays the seeds. The targets that drive the CLI's code (hook, MCP,
# spool, web guard) take it from an archive of the CLI's objects without
# main.o, as tests/fuzz/run.sh does.
$(BUILD)/libcairn-cli.a: $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ))
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(BUILD)/libcairn-cli.a $(BUILD)/libcairn.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DFUZZ_DATA='"$(CURDIR)/tests/data"' -o $@ $< tests/fuzz/replay.c \
	    $(BUILD)/libcairn-cli.a $(BUILD)/libcairn.a $(LDFLAGS) $(PKG_LIBS) $(DL_LIBS)

# Benchmarks take the library's settings from the environment as the CLI
# does (cli/env.c).
$(BUILD)/bench/%: bench/%.c $(BUILD)/libcairn.a $(BUILD)/cli/env.o bench/bench.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/cli/env.o $(BUILD)/libcairn.a $(LDFLAGS) $(PKG_LIBS) $(DL_LIBS)

test: all $(TEST_BIN) $(FUZZ_BIN)
	@BUILD=$(BUILD) sh tests/run.sh

check:
	$(MAKE) BUILD=build-san OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" test

valgrind: all $(TEST_BIN)
	@BUILD=$(BUILD) VALGRIND=1 sh tests/run.sh

bench: all $(BENCH_BIN)
	@BUILD=$(BUILD) sh bench/run.sh

eval: all
	@BUILD=$(BUILD) sh scripts/eval.sh

fuzz:
	@sh tests/fuzz/run.sh

deps:
	@sh scripts/deps.sh

demo: all
	@sh scripts/demo.sh --no-deps

# The man page and the shell completions go where man, bash-completion and
# zsh look under PREFIX (tests/t/t0533-cli-man.sh installs into a DESTDIR).
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 0644 docs/cairn.1 $(DESTDIR)$(PREFIX)/share/man/man1/cairn.1
	install -m 0644 completions/cairn.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/cairn
	install -m 0644 completions/_cairn $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_cairn
	install -m 0755 $(BUILD)/cairn $(DESTDIR)$(PREFIX)/bin/cairn
	install -m 0644 $(BUILD)/libcairn.a $(DESTDIR)$(PREFIX)/lib/libcairn.a
	install -m 0755 $(BUILD)/libcairn.so $(DESTDIR)$(PREFIX)/lib/libcairn.so
	install -m 0644 include/cairn.h $(DESTDIR)$(PREFIX)/include/cairn.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/^#define CAIRN_VERSION "\(.*\)"/\1/p' include/cairn.h)|' \
	    -e 's|@REQUIRES@|$(PKGS)|' -e 's|@STEMLIBS@|$(STEM_LIBS)|' cairn.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/cairn.pc

clean:
	rm -rf build build-san build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_SRC:%.c=$(BUILD)/%.d)
