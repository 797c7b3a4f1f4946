# Stepwise: one image for the web app (`stepwise serve`) and the workers (`stepwise worker`).
FROM python:3.11-slim-bookworm

RUN apt-get update \
    && apt-get install -y --no-install-recommends git bubblewrap ca-certificates \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 10001 stepwise
WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY jobs ./jobs
RUN pip install --no-cache-dir .

USER stepwise
ENV STEPWISE_WORKDIR=/home/stepwise/work
CMD ["stepwise", "--help"]
