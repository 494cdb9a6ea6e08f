# Packaging targets (see docs/packaging.md). The tests and checks run with scripts/test.sh.
PYTHON ?= .venv/bin/python
VERSION = $(shell python3 packaging/version.py)

.PHONY: help package smoke dist-linux icon clean-package bench

help:
	@echo "make package     build the one-folder bundle dist/memex (pyinstaller build.spec)"
	@echo "make smoke       build it and smoke-test it from outside the tree (packaging/ci-smoke.sh)"
	@echo "make dist-linux  dist/memex-$(VERSION)-linux-$$(uname -m).tar.gz with install.sh"
	@echo "make icon        render resources/icons/memex.png from memex.svg"
	@echo "make bench       regenerate docs/benchmarks.md at this commit (BUDGET=240 minutes)"

package:
	$(PYTHON) -m PyInstaller --noconfirm build.spec

smoke:
	bash packaging/ci-smoke.sh

dist-linux: package
	PYTHON=$(PYTHON) bash packaging/make-dist-linux.sh

icon:
	QT_QPA_PLATFORM=offscreen $(PYTHON) packaging/render_icon.py

# Every benchmark section that fits BUDGET minutes and this machine, then the report
# (python -m bench.all; --list shows the plan).
BUDGET ?= 240
bench:
	$(PYTHON) -m bench.all --budget $(BUDGET)

clean-package:
	rm -rf build/build build/dist-linux dist/memex dist/memex-*-linux-*.tar.gz*
