# Wide Neural Networks: An Executable Course -- build, test and run the book.
# Every target bootstraps .venv (python3 -m venv + pip install -e ".[test,book,lab,course]") when
# it is missing or pyproject.toml changed. No activation needed: tools run from .venv/bin.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install-stamp

# Chapters are the MyST notebooks in chapters/ (a jupytext header with a kernelspec);
# prose-only pages such as appendices are not executed on their own.
CHAPTERS = $(shell grep -l '^kernelspec:' chapters/*.md 2>/dev/null)
NOTEBOOKS = $(CHAPTERS:.md=.ipynb)

# MathJax 3 from the npm registry, served by the book itself (offline, no CDN).
MATHJAX_VERSION := 3
MATHJAX_SRC := .build-deps/node_modules/mathjax/es5
MATHJAX_DST := .build-deps/html_extra/_static/mathjax
MATHJAX := $(MATHJAX_DST)/tex-mml-chtml.js

# Debian's Chromium, driven headless by tests/test_browser.py (through Playwright, which
# is told to use this binary and never downloads a browser of its own).
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM

# The book's budget is 90 s per chapter on 2 quiet cores: `make bench` measures it and fails
# a chapter over it (CHAPTER_BUDGET_S). `make test` only guards against a hang, at five
# times the budget (CHAPTER_TIME_LIMIT_S), so that a busy machine cannot turn it red.
CHAPTER_BUDGET_S ?= 90
CHAPTER_TIME_LIMIT_S ?= 450
export CHAPTER_BUDGET_S CHAPTER_TIME_LIMIT_S
# `make test` prints how long each stage took: STAGE_TIMER runs a command and reports it.
define STAGE_TIMER
t0=$$(date +%s); status=0; $(1) || status=$$?; \
echo "$@: $$(( $$(date +%s) - t0 )) s"; exit $$status
endef
# Progress bars (tqdm reads TQDM_* defaults from the environment) are for readers running
# the chapters; headless executions (nbval, the book build) switch them off, so that a
# chapter's outputs hold no timings and the HTML shows no frozen bars.
# Every figure they display is checked against the book's figure rules (labels, colour
# limits, categorical colours, legends: lecturekit/figure_checks.py); nbval fails a cell
# whose figure breaks one.
# They also share a persistent JAX compilation cache: the nbval run starts it empty (so its
# chapter times are those of a first run) and fills it; the determinism run and the book
# build then reuse the compiled programs (same programs, so the same numbers).
# JAX's cache key leaves out the host's CPU (platform "cpu", device kind "cpu"): a working
# copy on a disk that several machines share would load programs compiled for another CPU,
# with instructions it may lack. Each machine has a folder of its own, named by a checksum
# of its CPU's feature flags. (On a CPU whose LLVM target has tuning flags such as
# +prefer-no-gather, XLA logs "Target machine feature ... is not supported on the host
# machine ... could lead to execution errors such as SIGILL" for every program it loads,
# even from this machine's own folder: it compares those tuning flags with the host's
# feature list, where they never appear.) XLA writes its C++ log to file descriptor 2, and
# ipykernel forwards that descriptor into the running cell's outputs, except under pytest
# (it checks PYTEST_CURRENT_TEST): nbval and the determinism run never stored these lines,
# but a chapter that the book build executes itself (`make book` after an edit) showed
# them on its page, 72 on ch10's after a one-line edit. TF_CPP_MIN_LOG_LEVEL=3 keeps
# XLA's C++ log to fatal errors in headless executions, so that the book build stores
# what nbval stores.
JAX_CACHE_ROOT := _build/jax-cache
HOST_CPU := $(shell { grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null || uname -m; } | cksum | cut -d' ' -f1)
JAX_CACHE := $(JAX_CACHE_ROOT)/cpu-$(HOST_CPU)
# Every compiled program goes to the persistent cache (not only those that took over a
# second to compile): the determinism run reuses what nbval compiled, and the two workers
# of the unit tests share theirs, in a cache of their own (other XLA flags, so no program
# in common with the chapters; and `make test` runs them while nbval empties its cache).
jax_cache_env = JAX_COMPILATION_CACHE_DIR=$(CURDIR)/$(1) \
  JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=-1
JAX_CACHE_ENV := $(call jax_cache_env,$(JAX_CACHE))
UNIT_JAX_CACHE_ENV := $(call jax_cache_env,_build/jax-cache-unit/cpu-$(HOST_CPU))
# Headless executions run two chapters at a time on the 2 cores of the budget, so each
# gets XLA's single-threaded runtime (--xla_cpu_multi_thread_eigen=false): with a thread
# pool in each kernel, the two kernels' pools only fought for the cores. Measured on 2
# cores, all chapters two at a time: from an empty cache 847 -> 734 busy CPU-s
# (443 -> 384 s), from a warm one 433 -> 417 (229 -> 220 s). The numbers agree
# with the threaded runtime's to rounding: of all text outputs 10 differed, 8 glued values
# by at most 3e-13 relative, a printed roundoff residual (ch06: 3e-18 against 1e-17) and
# the sign of a printed zero (ch08, which now adds 0.0 to print 0. either way). Running
# ch02, ch04 and ch06 on one core instead of two changed two glued values of ch02 by 2e-15:
# a reader's machine reproduces the book's numbers to rounding, not bit for bit, with
# either runtime. `make lab` and `make bench` keep XLA's defaults, as a reader's runs.
CHAPTER_XLA_FLAGS := --xla_cpu_multi_thread_eigen=false
HEADLESS := TQDM_DISABLE=1 LECTUREKIT_AUDIT_FIGURES=1 TF_CPP_MIN_LOG_LEVEL=3 \
  XLA_FLAGS=$(CHAPTER_XLA_FLAGS) $(JAX_CACHE_ENV)
# Extra options for JupyterLab, e.g. make lab LAB_ARGS="--no-browser --port 8890"
LAB_ARGS ?=
# Publication: the public repository (GitHub or GitLab) adds a Binder launch button and a
# repository button, e.g. make book BOOK_REPOSITORY_URL=https://github.com/ORG/REPO
# (scripts/launch_config.py writes the derived configuration). Unset: built from _config.yml.
BOOK_REPOSITORY_URL ?=
BOOK_REPOSITORY_BRANCH ?= main
LAUNCH_CONFIG := _build/launch/_config.yml
# Editions: make book SOLUTIONS=0 (and make pdf SOLUTIONS=0) leave the solutions out
# (scripts/edition_config.py, scripts/nosolutions_ext.py); same execution cache, own output.
SOLUTIONS ?= 1
BASE_CONFIG := $(if $(BOOK_REPOSITORY_URL),$(LAUNCH_CONFIG),_config.yml)
NOSOLUTIONS := _build/nosolutions
NOSOLUTIONS_CONFIG := $(NOSOLUTIONS)/_config.yml
BOOK_HTML := $(if $(filter 0,$(SOLUTIONS)),_build/html-nosolutions,_build/html)
BOOK_PDF := $(if $(filter 0,$(SOLUTIONS)),_build/pdf/book-nosolutions.pdf,_build/pdf/book.pdf)
# nbgrader course directory written by make assignments (source/ and nbgrader_config.py)
COURSE ?= course

.PHONY: help venv mathjax browser-deps notebooks api book test test-unit test-notebooks \
        test-determinism check-determinism test-book lint format lab student bench clean pdf assignments

help:  ## list the targets
	@echo "Targets (each creates .venv first if needed):"
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | \
	  awk -F ':.*## ' '{printf "  make %-17s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing lecturekit and the book's tools into $(VENV) (a few minutes the first time)"
	$(BIN)/python -m pip install --disable-pip-version-check -q -e ".[test,book,lab,course]"
	@touch $@

venv: $(STAMP)  ## create or update .venv from pyproject.toml

# The page loads tex-mml-chtml.js, which loads its fonts and, on first use, the TeX
# extensions it autoloads (\boldsymbol, \cancel, ...). The speech-rule-engine defaults
# inside the bundle name a CDN (used only if a reader turns speech on): the sed removes
# them so that nothing in the book points to a CDN.
$(MATHJAX):
	@command -v npm >/dev/null || { echo "npm (Node.js) is needed to fetch MathJax" >&2; exit 1; }
	npm install --prefix .build-deps --no-audit --no-fund --loglevel=error mathjax@$(MATHJAX_VERSION)
	rm -rf $(MATHJAX_DST)
	mkdir -p $(MATHJAX_DST)/output/chtml $(MATHJAX_DST)/input/tex
	cp $(MATHJAX_SRC)/tex-mml-chtml.js $(MATHJAX_DST)/
	cp -r $(MATHJAX_SRC)/output/chtml/fonts $(MATHJAX_DST)/output/chtml/
	cp -r $(MATHJAX_SRC)/input/tex/extensions $(MATHJAX_DST)/input/tex/
	sed -i 's#https://cdn\.jsdelivr\.net/npm/#no-cdn/#g' $(MATHJAX_DST)/tex-mml-chtml.js

mathjax: $(MATHJAX)  ## fetch MathJax 3 for the offline HTML book

# Installs Debian's chromium package when $(CHROMIUM) is absent (as root, or through sudo).
browser-deps:  ## install Chromium for the browser test (apt-get) if it is missing
	@if [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	if [ "$(CHROMIUM)" != /usr/bin/chromium ]; then \
	  echo "CHROMIUM=$(CHROMIUM) does not exist" >&2; exit 1; fi; \
	command -v apt-get >/dev/null || { \
	  echo "/usr/bin/chromium is missing and there is no apt-get: install Chromium," \
	       "then run with CHROMIUM=/path/to/chromium" >&2; exit 1; }; \
	if [ "$$(id -u)" -eq 0 ]; then sudo=; \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else echo "/usr/bin/chromium is missing; install it as root: apt-get install chromium" >&2; exit 1; fi; \
	echo "Installing Debian's chromium package for the browser test"; \
	$$sudo apt-get update -q; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	test -x /usr/bin/chromium

# A notebook is out of date when its source or the installation is newer. One jupytext
# process converts all those: every start of jupytext imports nbformat's schema checker,
# whose IRI grammar (rfc3987_syntax, which lark compiles on import) alone takes 1.3 s, so
# one process per chapter made `make notebooks` take 30 s on a fresh clone, before
# `make test` could start anything else. jupytext gives the source and its notebook the
# same time when it writes, but --update leaves an unchanged notebook as it was and gives
# the source the current time. `touch -r` then gives each converted notebook its source's
# time: up to date here, and not newer than its source, which jupytext's contents manager
# in JupyterLab would refuse to open if their texts differ (by more than one second: a
# notebook touched after the whole batch was 1.1 s newer than ch01's source, and the page
# failed to open with HTTP 400).
notebooks: $(STAMP)  ## generate chapters/*.ipynb from the MyST sources
	@outdated="$$(for md in $(CHAPTERS); do nb="$${md%.md}.ipynb"; \
	  if [ "$$md" -nt "$$nb" ] || [ $(STAMP) -nt "$$nb" ]; then echo "$$md"; fi; done)"; \
	if [ -n "$$outdated" ]; then \
	  echo "jupytext --to ipynb --update:" $$outdated; \
	  $(BIN)/jupytext --to ipynb --update --quiet $$outdated; \
	  for md in $$outdated; do touch -r "$$md" "$${md%.md}.ipynb"; done; \
	fi

# The API reference: one page per public module of lecturekit (api/*.rst, git-ignored),
# written from the package's __all__ lists and docstrings; it also brings the API part of
# _toc.yml up to date when a module was added or removed. Fails on a module without __all__.
api: $(STAMP)  ## write the API reference pages (api/*.rst) from lecturekit; make book runs it
	$(BIN)/python scripts/api_reference.py

book: $(STAMP) $(MATHJAX) notebooks api  ## build the HTML book into _build/html (BOOK_REPOSITORY_URL=...: with Binder buttons; SOLUTIONS=0: without solutions)
ifdef BOOK_REPOSITORY_URL
	$(BIN)/python scripts/launch_config.py --url "$(BOOK_REPOSITORY_URL)" --branch "$(BOOK_REPOSITORY_BRANCH)" --out $(LAUNCH_CONFIG)
endif
ifeq ($(SOLUTIONS),0)
	$(BIN)/python scripts/edition_config.py --config $(BASE_CONFIG) --out $(NOSOLUTIONS_CONFIG)
	$(HEADLESS) $(BIN)/jupyter-book build -W -n --keep-going --path-output $(NOSOLUTIONS) --config $(NOSOLUTIONS_CONFIG) .
	ln -sfn nosolutions/_build/html _build/html-nosolutions
else ifdef BOOK_REPOSITORY_URL
	$(HEADLESS) $(BIN)/jupyter-book build -W -n --keep-going --config $(LAUNCH_CONFIG) .
else
	$(HEADLESS) $(BIN)/jupyter-book build -W -n --keep-going .
endif
	@echo "Open $(CURDIR)/$(BOOK_HTML)/index.html"

# Every chapter is executed twice, two at a time: by nbval (which fills the book's execution
# cache and the JAX compilation cache), then by the determinism check, beside the book
# build, which takes the chapters from nbval's cache and executes none of them.
# The unit tests need no chapter: they start with nbval and run beside everything at a low
# priority, so that they take mostly the time the others leave idle (the end of nbval's
# and of the determinism run's last chapter, the single-threaded Sphinx builds), and get a
# normal priority back when the chapters and the book are done. Linux shares the CPU
# fairly between sessions before it looks at nice values (autogroups: Jupyter starts every
# kernel in a session of its own), so a plain `nice` would still take a third of the CPU
# from nbval's two kernels (nbval measured 299 -> 474 s): the unit tests run in a session
# of their own (setsid) whose autogroup gets nice 10 (/proc/self/autogroup), a tenth of a
# normal session's share, and nice 0 again at the end (no privilege is needed to raise an
# autogroup's nice or to lower it back to 0, but an unprivileged user may change one only
# every 0.1 s, so the reset is tried a few times). Without that reset, on a machine kept
# busy by other work they would crawl on at a tenth of a share after everything else had
# finished. Where the kernel has no autogroups the writes fail silently and the unit tests
# simply share the CPU at the normal priority. Their output is printed when they end
# (_build/test-unit.log); an interrupted `make test` stops them too, and starts no later
# stage.
UNIT_LOG := _build/test-unit.log
test: $(STAMP) $(MATHJAX) notebooks  ## lint; the chapters under nbval, then a second run of them (determinism) beside the book; the unit tests beside it all, at low priority
	@t0=$$(date +%s); status=0; unit_status=0; mkdir -p _build; \
	$(MAKE) --no-print-directory lint || status=$$?; \
	setsid $(SHELL) -c '{ echo 10 > /proc/self/autogroup; } 2>/dev/null; \
	  exec $(MAKE) --no-print-directory test-unit' > $(UNIT_LOG) 2>&1 & unit=$$!; \
	stop() { kill -- -$$unit 2>/dev/null; exit $$1; }; trap 'stop 130' INT; trap 'stop 143' TERM; \
	$(MAKE) --no-print-directory test-notebooks || status=$$?; \
	BOOK_FROM_NBVAL_CACHE=1 $(MAKE) --no-print-directory -j2 --output-sync=target \
	  test-determinism test-book || status=$$?; \
	for try in 1 2 3 4 5; do { echo 0 > /proc/$$unit/autogroup; } 2>/dev/null && break; sleep 0.2; done; \
	wait $$unit || unit_status=$$?; cat $(UNIT_LOG); \
	[ $$unit_status -eq 0 ] || status=$$unit_status; \
	echo "make test: $$(( $$(date +%s) - t0 )) s in total"; \
	exit $$status

# The library's formatter and linter (ruff, configured in pyproject.toml): `make lint` checks,
# `make format` rewrites. A second or two; `make test` runs it first.
lint: $(STAMP)  ## ruff: lecturekit formatted (ruff format --check) and lint-clean (ruff check)
	@$(call STAGE_TIMER,$(BIN)/ruff format --check lecturekit && $(BIN)/ruff check lecturekit)

format: $(STAMP)  ## ruff format lecturekit (and the safe ruff check fixes)
	$(BIN)/ruff check --fix lecturekit
	$(BIN)/ruff format lecturekit

# --doctest-modules: the Example of every docstring in lecturekit runs too (root conftest.py).
# Two workers, each with a single-threaded XLA runtime (as the chapters'): the unit tests
# are small programs, mostly compilation (a second run from a warm cache takes half the
# CPU time), and XLA's thread
# pools only fight each other (and the chapters that `make test` runs beside them) for the
# 2 cores: a fifth less CPU time. A file's tests stay in one worker (--dist loadfile), so its
# module fixtures and compiled programs are made once, and the persistent compilation cache
# shares programs between the workers: together another tenth less.
# Since compiling is most of their time, the unit tests compile with XLA's cheapest
# settings: LLVM without its optimization passes (JAX_DISABLE_MOST_OPTIMIZATIONS) and XLA's
# classic loop emitters for fusions, not the newer MLIR ones (--xla_cpu_use_fusion_emitters
# =false): measured on a quiet machine with an empty cache, about 520 -> 385 CPU-s. Neither
# allows fast-math, so every result agrees with the default build's to rounding; but the
# last bit can differ (fused multiply-adds, the order of a fusion's operations), which
# matters only where two *different* programs are promised to agree exactly (a jitted
# initialization and the eager one give the same numbers): the tests that compare two
# programs bit for bit are marked `default_xla` and run in a second pytest, with the
# settings the chapters run with (only the files that have such tests are collected).
# It starts beside the first one and its report is printed after the first's
# (_build/test-unit-default-xla.log): run after the first, this one process ended the stage
# with a core idle for 10 to 12 s.
UNIT_XLA_FLAGS := $(CHAPTER_XLA_FLAGS)
UNIT_FAST_COMPILE := JAX_DISABLE_MOST_OPTIMIZATIONS=1 \
  XLA_FLAGS="$(UNIT_XLA_FLAGS) --xla_cpu_use_fusion_emitters=false"
UNIT_SELECTION := not notebooks and not book and not determinism
DEFAULT_XLA_TESTS = $(shell grep -l 'mark.default_xla' tests/*.py)
UNIT_DEFAULT_XLA_LOG := _build/test-unit-default-xla.log
test-unit: $(STAMP)  ## unit and property tests, and the docstring examples (two pytest-xdist workers)
	@mkdir -p _build; \
	unit_tests() { \
	  $(if $(DEFAULT_XLA_TESTS),XLA_FLAGS="$(UNIT_XLA_FLAGS)" $(UNIT_JAX_CACHE_ENV) $(BIN)/pytest \
	    -m "$(UNIT_SELECTION) and default_xla" $(DEFAULT_XLA_TESTS) > $(UNIT_DEFAULT_XLA_LOG) 2>&1 & \
	    second=$$!; trap 'kill $$second 2>/dev/null || true' EXIT; \
	    trap 'exit 130' INT; trap 'exit 143' TERM;) \
	  first=0; $(UNIT_FAST_COMPILE) $(UNIT_JAX_CACHE_ENV) $(BIN)/pytest -n 2 --dist loadfile \
	    -m "$(UNIT_SELECTION) and not default_xla" --durations=10 \
	    --doctest-modules tests/ lecturekit/ || first=$$?; \
	  $(if $(DEFAULT_XLA_TESTS),second_status=0; wait $$second || second_status=$$?; \
	    cat $(UNIT_DEFAULT_XLA_LOG); [ $$second_status -eq 0 ] || return $$second_status;) \
	  return $$first; }; \
	$(call STAGE_TIMER,unit_tests)

# Two at a time (pytest-xdist, --dist loadfile: a notebook's cells stay together, in order,
# in one worker and one kernel); the chapter table is printed at the end.
test-notebooks: $(STAMP) notebooks  ## execute every chapter (nbval, two at a time), with per-chapter times
	@test -n "$(NOTEBOOKS)" || { echo "no chapter notebooks found in chapters/" >&2; exit 1; }
	rm -rf $(JAX_CACHE_ROOT)
	@$(call STAGE_TIMER,$(HEADLESS) $(BIN)/pytest -n 2 --dist loadfile --nbval-lax \
	  --nbval-current-env --nbval-cell-timeout=300 $(NOTEBOOKS))

test-determinism: $(STAMP) notebooks  ## execute every chapter again: same text outputs as the nbval run
	@$(call STAGE_TIMER,$(HEADLESS) $(BIN)/pytest -m determinism tests/test_determinism.py)

check-determinism: test-determinism  ## the same as test-determinism

test-book: $(STAMP) $(MATHJAX) browser-deps  ## build the book (warnings as errors), open every page in Chromium, print one chapter to PDF
	@$(call STAGE_TIMER,$(HEADLESS) $(BIN)/pytest -m book tests/)

lab: $(STAMP) notebooks  ## JupyterLab on chapters/, .md files open as notebooks
	@mkdir -p $(VENV)/share/jupyter/lab/settings
	@cp binder/jupyterlab-overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) chapters/

student: $(STAMP)  ## write student/ notebooks with exercise solutions removed
	$(BIN)/python scripts/make_student.py

# Chromium prints the HTML that `make book` built (nothing is executed again): one PDF with
# bookmarks, a table of contents and page numbers (scripts/make_pdf.py).
pdf: book browser-deps  ## one PDF of the whole book: _build/pdf/book.pdf (SOLUTIONS=0: book-nosolutions.pdf; TAGGED=1: tagged for screen readers)
	$(BIN)/python scripts/make_pdf.py --html $(BOOK_HTML) --out $(BOOK_PDF) --config $(BASE_CONFIG) \
	  $(if $(filter 0,$(SOLUTIONS)),--edition "Edition without solutions") $(if $(TAGGED),--tagged)

# nbgrader runs alembic from PATH: the venv's bin first.
assignments: $(STAMP)  ## nbgrader course directory course/: one graded assignment per chapter in source/
	$(BIN)/python scripts/make_assignments.py --course $(COURSE)
	@echo "Then: cd $(COURSE) && PATH=$(CURDIR)/$(BIN):\$$PATH nbgrader generate_assignment ch01_initialization"

# Each script prints its table and goals and writes benchmarks/results/NAME.json; report.py
# then rewrites benchmarks/RESULTS.md. A script whose goal is not met exits with status 1.
BENCHMARKS := ntk hessian slq kernels chapters
bench: $(STAMP) notebooks  ## benchmarks (under 10 min): NTK methods, Hessian norm, SLQ density at 10^6 parameters, analytic kernels, chapter times
	@t0=$$(date +%s); status=0; \
	for name in $(BENCHMARKS); do echo "==> benchmarks/$$name.py"; \
	  $(BIN)/python benchmarks/$$name.py || status=1; echo; done; \
	$(BIN)/python benchmarks/report.py; \
	echo "make bench: $$(( $$(date +%s) - t0 )) s in total"; exit $$status

clean:  ## remove _build, student/, course/source, the generated chapters/*.ipynb and api/ pages (keeps .venv and a course's gradebook)
	rm -rf _build student $(COURSE)/source
	rm -f chapters/*.ipynb
	find api -name '*.rst' -delete 2>/dev/null || true
	find api -mindepth 1 -type d -empty -delete 2>/dev/null || true
