# Lekta service image: the Go binary plus Debian's Chromium, running as an
# unprivileged user (Chromium keeps its sandbox; see SECURITY.md).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/lekta ./cmd/lekta

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium ca-certificates fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /home/lekta lekta
COPY --from=build /out/lekta /usr/local/bin/lekta
USER lekta
EXPOSE 8080
# Set LEKTA_REDIS_URL to share limits, cache and reports between instances.
ENTRYPOINT ["/usr/local/bin/lekta", "serve", "--addr", "0.0.0.0:8080"]
