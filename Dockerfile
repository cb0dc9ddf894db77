# syntax=docker/dockerfile:1
# execeval's own image: Debian 12, execeval (built here), python3 and the
# lint tools (pyflakes, flake8, bandit). docs/scale-out.md's manifests run
# it; `execeval --backend docker` / `execeval docker-command` name it
# (--image, default execeval:latest). Build: docker build -t execeval:latest .
# Checked statically by `make image-check` (tests/docs/test_dockerfile.py).
#
# What execeval needs from the runtime (docs/scale-out.md, "What the
# container must allow"), as the SUPERVISOR (execeval run/eval/serve with
# the native backend inside this container):
#   - root in the container (runAsUser: 0 / docker run --user 0) with the
#     capabilities SYS_ADMIN, SETUID, SETGID, SETPCAP, KILL (drop the rest);
#   - seccomp: Unconfined (the runtime's default profile refuses the
#     clone/unshare/mount flags the sandbox uses; execeval installs its own,
#     stricter filter on every candidate);
#   - AppArmor: unconfined (docker-default denies mount(2) whatever the
#     capabilities);
#   - no privileged: true, no host mounts beyond the data and results.
# As the CONTAINER OF ONE CANDIDATE (--backend docker), the image needs
# none of that: docker_argv.c runs it with --user 65534:65534 --cap-drop ALL
# --security-opt no-new-privileges --network none --read-only, the
# runtime's default seccomp and AppArmor profiles, and execeval's relay
# loads the native seccomp filter on top. USER below is that default: a
# supervisor deployment sets root explicitly (the manifests do).

FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential pkg-config libseccomp-dev \
        libjansson-dev zlib1g-dev libmicrohttpd-dev libsqlite3-dev python3 python3-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make clean && make build/execeval build/execeval.1 \
 && make install PREFIX=/usr/local DESTDIR=/out

FROM debian:12-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libseccomp2 libjansson4 zlib1g libmicrohttpd12 \
        libsqlite3-0 python3 python3-pyflakes python3-flake8 python3-bandit \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/usr/local/ /usr/local/
USER 65534:65534
WORKDIR /tmp
ENTRYPOINT ["/usr/local/bin/execeval"]
CMD ["--help"]
