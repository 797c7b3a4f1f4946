# Stepwise: one image for the web app (`stepwise serve`) and the workers (`stepwise worker`).
# The toolchains repositories' `setup` and `validate` commands find: Python 3.11 (with venv and
# pip) and Node.js with npm. For another toolchain, build FROM this image (see the README).
FROM python:3.11-slim-bookworm

RUN apt-get update \
    && apt-get install -y --no-install-recommends git bubblewrap ca-certificates nodejs npm \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 10001 stepwise
WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY jobs ./jobs
RUN pip install --no-cache-dir .

USER stepwise
ENV STEPWISE_WORKDIR=/home/stepwise/work
# Job environments built by `setup` are cached here (least recently used evicted past the size).
ENV STEPWISE_ENV_CACHE_MB=4096
CMD ["stepwise", "--help"]
