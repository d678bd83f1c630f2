# docker/suite.mk - the deployment suites (included by the top-level Makefile).
#   make docker-test   build docker/Dockerfile with buildah (no Docker engine) and serve the lessons from the image
#   make test-lb       nginx with docker/nginx.conf in front of three servers: spread, failover, drain
#   make test-deploy   the Kubernetes manifests and compose.yaml: parse and check every required field
# All three are part of `make test`.

# What docker-test needs: the container tools (podman pulls in crun and conmon), debootstrap for the base image.
DEB_DOCKER := podman buildah debootstrap iproute2
# What test-lb and test-deploy need (the system python has NumPy already; nodejs for the Kubernetes schemas).
DEB_DEPLOY := nginx python3-yaml nodejs
DEB_TEST   += $(DEB_DOCKER) $(DEB_DEPLOY)

DOCKER_IMAGE   ?= attention-server:test
# containers-storage of its own (vfs driver: works without overlay or fuse, here and in CI); it outlives the work
# tree, so a second run on the same machine reuses the base image and the build's layer cache.
DOCKER_ROOT    ?= /var/lib/containers/attention-vfs
DOCKER_RUNROOT ?= /run/containers/attention-vfs
# the debootstrapped base image, kept to re-import if the storage above is wiped
DOCKER_BASE_TAR ?= $(BUILD)/docker/debian-bookworm-slim.tar
# the whole target must end in 15 minutes even from nothing (measured: see the report in docker/README.md)
DOCKER_TEST_TIMEOUT ?= 900

.PHONY: docker-test test-lb test-deploy deps-docker deps-deploy deps-npm
TEST_SUITES += docker-test test-lb test-deploy

deps-docker:
	$(call apt_install,$(DEB_DOCKER))

deps-deploy:
	$(call apt_install,$(DEB_DEPLOY))

docker-test: deps-docker
	@mkdir -p $(BUILD)/docker
	IMAGE=$(DOCKER_IMAGE) DOCKER_ROOT=$(DOCKER_ROOT) DOCKER_RUNROOT=$(DOCKER_RUNROOT) \
	  BASE_TAR=$(DOCKER_BASE_TAR) PYTHON=$(PYTHON) OUT=$(BUILD)/docker \
	  timeout --kill-after=10 $(DOCKER_TEST_TIMEOUT) docker/tests/image_test.sh

test-lb: deps-deploy $(SERVER_BIN)
	$(PYTHON) docker/tests/test_lb.py --server $(SERVER_BIN) --nginx-conf docker/nginx.conf \
	  --work $(BUILD)/lb

# the Kubernetes schemas come with the npm package kubernetes-models (pinned by the committed package-lock.json)
K8S_SCHEMA_DIR := docker/tests/k8s-schema

# installed again only when the lock changes (test-build installs them
# beside the compilers)
K8S_SCHEMA_NODE := $(K8S_SCHEMA_DIR)/node_modules/.package-lock.json
TEST_BUILD      += $(K8S_SCHEMA_NODE)
$(K8S_SCHEMA_NODE): $(K8S_SCHEMA_DIR)/package-lock.json
	@command -v npm >/dev/null || $(MAKE) --no-print-directory deps-npm
	cd $(K8S_SCHEMA_DIR) && npm ci --no-audit --no-fund --loglevel=error

test-deploy: deps-deploy $(SERVER_BIN) $(K8S_SCHEMA_NODE)
	$(PYTHON) docker/tests/test_manifests.py --server $(SERVER_BIN) --schema-dir $(K8S_SCHEMA_DIR)

# Debian's nodejs has no npm of its own; a machine whose nodejs already brings npm skips this
deps-npm:
	$(call apt_install,npm)
