# Packaging targets (see docs/packaging.md). The tests and checks run with scripts/test.sh.
PYTHON ?= .venv/bin/python
VERSION = $(shell python3 packaging/version.py)

.PHONY: help package smoke dist-linux icon clean-package

help:
	@echo "make package     build the one-folder bundle dist/memex (pyinstaller build.spec)"
	@echo "make smoke       build it and smoke-test it from outside the tree (packaging/ci-smoke.sh)"
	@echo "make dist-linux  dist/memex-$(VERSION)-linux-$$(uname -m).tar.gz with install.sh"
	@echo "make icon        render resources/icons/memex.png from memex.svg"

package:
	$(PYTHON) -m PyInstaller --noconfirm build.spec

smoke:
	bash packaging/ci-smoke.sh

dist-linux: package
	PYTHON=$(PYTHON) bash packaging/make-dist-linux.sh

icon:
	QT_QPA_PLATFORM=offscreen $(PYTHON) packaging/render_icon.py

clean-package:
	rm -rf build/build build/dist-linux dist/memex dist/memex-*-linux-*.tar.gz*
