# kvgen's CLI image, ghcr.io/kvgen-dev/kvgen:<kvgen version>: `kvgen render --check`, `kvgen
# validate` in pipelines that do not run pip. It installs the kvgen wheel built from this
# checkout, so build the wheel first (the context is the repository root; only the wheel
# enters it: images/kvgen.Dockerfile.dockerignore):
#
#   python -m build --wheel     # dist/kvgen-<version>-py3-none-any.whl
#   docker build -f images/kvgen.Dockerfile --build-arg KVGEN_VERSION=<version> -t ghcr.io/kvgen-dev/kvgen:<version> .
#   docker run --rm -v "$PWD:/work" ghcr.io/kvgen-dev/kvgen:<version> validate specs/
#   docker run --rm -v "$PWD:/work" ghcr.io/kvgen-dev/kvgen:<version> render specs/ -o rendered/ --check
#
# KVGEN_VERSION's default is kvgen/__init__.py's __version__ (tests/test_runtime_image.py).
FROM python:3.12-slim

ARG KVGEN_VERSION=0.1.0

COPY dist/kvgen-${KVGEN_VERSION}-py3-none-any.whl /tmp/
RUN pip install --no-cache-dir --no-compile "/tmp/kvgen-${KVGEN_VERSION}-py3-none-any.whl" \
    && rm "/tmp/kvgen-${KVGEN_VERSION}-py3-none-any.whl" \
    && useradd --uid 10001 --user-group --create-home --shell /usr/sbin/nologin kvgen \
    && kvgen --help > /dev/null

# kvgen keeps a parse cache under $HOME/.cache (the user's, writable); specs come in at /work
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["kvgen"]
CMD ["--help"]

LABEL org.opencontainers.image.title="kvgen" \
      org.opencontainers.image.description="kvgen ${KVGEN_VERSION}: compile a validated spec into Kubernetes manifests for vLLM with KV-cache offloading" \
      org.opencontainers.image.version="${KVGEN_VERSION}" \
      org.opencontainers.image.source="https://github.com/kvgen-dev/kvgen" \
      org.opencontainers.image.licenses="Apache-2.0"
