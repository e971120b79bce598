# Lekta service image: the Go binary plus Debian's Chromium headless shell, running as an
# unprivileged user (Chromium keeps its sandbox; see SECURITY.md).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/lekta ./cmd/lekta

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium-headless-shell ca-certificates fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /home/lekta lekta \
 && install -d -o lekta -g lekta -m 0700 /var/lib/lekta
COPY --from=build /out/lekta /usr/local/bin/lekta
USER lekta
EXPOSE 8080
# Limits, cache and reports live in the SQLite file in /var/lib/lekta: mount a
# volume there to keep them across containers. To share them between
# instances, set LEKTA_REDIS_URL (hot state) and LEKTA_DATABASE_URL (reports).
ENV LEKTA_DATA_DIR=/var/lib/lekta
VOLUME /var/lib/lekta
ENTRYPOINT ["/usr/local/bin/lekta", "serve", "--addr", "0.0.0.0:8080"]
