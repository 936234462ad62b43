#!/usr/bin/env python3
"""Check docker-compose.yml without Docker: the Compose Specification JSON schema, then the
project's own rules for the `skillreg` service, which the schema cannot express.

    "$SKILLREG_PYTHON" scripts/check-compose.py [--schema PATH] [COMPOSE_FILE]
    "$SKILLREG_PYTHON" scripts/check-compose.py --replicas [--schema PATH] [COMPOSE_FILE]

COMPOSE_FILE defaults to docker-compose.yml at the repository root, or with --replicas to
deploy/replicas/compose.yml, whose rules cover PostgreSQL, every `skillreg-N` replica and the
HAProxy service with its haproxy.cfg (each replica a `server`, round robin without session
affinity, a failed connection retried on another replica, the client's address forwarded from
a fixed proxy address the replicas trust). The schema defaults to
$SKILLREG_COMPOSE_SCHEMA, written to <tools>/env.sh by scripts/install-test-tools.sh (which
also installs jsonschema and PyYAML into the venv that $SKILLREG_PYTHON names).

Exit status: 0 valid, 1 a schema violation or a broken rule (each one printed), 2 the check
could not run (no schema, missing modules, unreadable or unparseable file).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVICE = "skillreg"
DATA_DIR = "/var/lib/skillreg"
CONTAINER_PORT = 8080
READY_PATH = "/readyz"


def die(message: str) -> None:
    print(f"check-compose: error: {message}", file=sys.stderr)
    sys.exit(2)


try:
    import jsonschema
    import yaml
except ImportError as e:
    die(
        f"{e.name} is not importable from {sys.executable}; run scripts/install-test-tools.sh, "
        'then "$SKILLREG_PYTHON" scripts/check-compose.py (SKILLREG_PYTHON from <tools>/env.sh)'
    )


class StrictLoader(yaml.SafeLoader):
    """A safe loader that refuses duplicate keys, as Compose itself does."""


def _construct_mapping(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False):
    seen = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"duplicate key {key!r} (first at line {seen[key] + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line
    loader.flatten_mapping(node)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

_INTERPOLATION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}")


def interpolate(value):
    """Enough of Compose interpolation to read ports and volumes: ${VAR}, ${VAR:-default},
    ${VAR-default}; an unset variable becomes its default or the empty string."""
    if not isinstance(value, str):
        return value

    def sub(m: re.Match) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3) or ""
        current = os.environ.get(name)
        if op in (":-", "-"):
            if current is None or (op == ":-" and current == ""):
                return arg
        return current or ""

    return _INTERPOLATION.sub(sub, value.replace("$$", "\0")).replace("\0", "$")


def location(path) -> str:
    return "/".join(str(p) for p in path) or "(top level)"


def schema_errors(document, schema) -> list[str]:
    # The Compose schema says "https://json-schema.org/draft-07/schema", a spelling jsonschema
    # does not recognise (it would fall back to the latest draft): pick the draft by name.
    declared = str(schema.get("$schema", ""))
    drafts = {
        "draft-04": jsonschema.Draft4Validator,
        "draft-06": jsonschema.Draft6Validator,
        "draft-07": jsonschema.Draft7Validator,
        "2019-09": jsonschema.Draft201909Validator,
        "2020-12": jsonschema.Draft202012Validator,
    }
    cls = next((v for k, v in drafts.items() if k in declared), jsonschema.Draft7Validator)
    cls.check_schema(schema)
    problems = []
    for error in sorted(cls(schema).iter_errors(document), key=lambda e: list(map(str, e.path))):
        text = error.message
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known, patterns = error.schema.get("properties", {}), error.schema.get("patternProperties", {})
            extra = [
                k
                for k in error.instance
                if k not in known and not any(re.search(p, str(k)) for p in patterns)
            ]
            text = f"unknown key(s) {', '.join(map(repr, extra))}: not in the Compose Specification"
        message = f"schema: {location(error.absolute_path)}: {text}"
        if error.context:  # oneOf/anyOf: the error that got deepest into a branch
            best = max(error.context, key=lambda e: len(e.absolute_path))
            message += f" (closest: {location(best.absolute_path)}: {best.message})"
        problems.append(message)
    return problems


def environment_keys(environment) -> dict:
    if isinstance(environment, dict):
        return {str(k): v for k, v in environment.items()}
    if isinstance(environment, list):
        out = {}
        for item in environment:
            key, _, value = str(item).partition("=")
            out[key] = value
        return out
    return {}


def env_files(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item["path"] if isinstance(item, dict) else item for item in value]
    return []


def publishes_container_port(entry) -> bool:
    """True for a ports entry that maps CONTAINER_PORT to an explicit host port."""
    if isinstance(entry, dict):
        published = interpolate(entry.get("published"))
        return str(interpolate(entry.get("target"))) == str(CONTAINER_PORT) and published not in (None, "")
    spec = str(interpolate(entry)).split("/", 1)[0]
    parts = spec.rsplit(":", 2)
    if len(parts) < 2:  # "8080": container port only, on a random host port
        return False
    container, published = parts[-1], parts[-2]
    return container == str(CONTAINER_PORT) and published != ""


def mounts_named_volume(entry, declared: set[str]) -> str | None:
    """The named volume mounted at DATA_DIR by this volumes entry, or None."""
    if isinstance(entry, dict):
        if entry.get("type", "volume") != "volume" or interpolate(entry.get("target")) != DATA_DIR:
            return None
        source = interpolate(entry.get("source"))
    else:
        parts = str(interpolate(entry)).split(":")
        if len(parts) < 2 or parts[1] != DATA_DIR:
            return None
        source = parts[0]
    if not source or source.startswith((".", "/", "~")) or source not in declared:
        return None
    return source


def rule_errors(document) -> list[str]:
    problems = []

    def rule(ok: bool, message: str) -> None:
        if not ok:
            problems.append(f"rule: {message}")

    services = document.get("services") if isinstance(document, dict) else None
    service = services.get(SERVICE) if isinstance(services, dict) else None
    if not isinstance(service, dict):
        return [f"rule: services/{SERVICE}: missing: the registry service must be named {SERVICE!r}"]
    where = f"services/{SERVICE}"

    rule("build" in service, f"{where}/build: missing: the image is built from the Dockerfile")

    files = env_files(service.get("env_file"))
    rule(bool(files), f"{where}/env_file: missing: SKILLREG_ADMIN_TOKEN comes from an env_file (.env)")
    environment = environment_keys(service.get("environment"))
    rule(
        "SKILLREG_ADMIN_TOKEN" not in environment,
        f"{where}/environment: sets SKILLREG_ADMIN_TOKEN: keep the secret in the env_file, not in the compose file",
    )
    rule(
        "SKILLREG_ALLOWED_HOSTS" in environment,
        f"{where}/environment: SKILLREG_ALLOWED_HOSTS missing: /mcp must accept the host name it is reached by",
    )

    ports = service.get("ports") or []
    rule(
        any(publishes_container_port(p) for p in ports),
        f"{where}/ports: container port {CONTAINER_PORT} is not published on an explicit host port",
    )

    declared = set((document.get("volumes") or {}).keys())
    volumes = service.get("volumes") or []
    rule(
        any(mounts_named_volume(v, declared) for v in volumes),
        f"{where}/volumes: no named volume (declared under top-level volumes) is mounted at {DATA_DIR}",
    )

    healthcheck = service.get("healthcheck")
    if not isinstance(healthcheck, dict) or healthcheck.get("disable") is True:
        rule(False, f"{where}/healthcheck: missing or disabled")
    else:
        test = healthcheck.get("test")
        text = " ".join(map(str, test)) if isinstance(test, list) else str(test or "")
        rule(
            isinstance(test, (list, str)) and text.split()[:1] != ["NONE"] and READY_PATH in text,
            f"{where}/healthcheck/test: does not probe {READY_PATH}: {text!r}",
        )

    restart = service.get("restart")
    rule(
        restart in ("unless-stopped", "always"),
        f"{where}/restart: {restart!r}: the registry should come back after a crash or reboot (unless-stopped)",
    )
    return problems


def replica_rules(document, compose_file: str) -> list[str]:
    """The rules of the PostgreSQL + replicas deployment."""
    problems = []

    def rule(ok: bool, message: str) -> None:
        if not ok:
            problems.append(f"rule: {message}")

    services = document.get("services") if isinstance(document, dict) else None
    if not isinstance(services, dict):
        return ["rule: services: missing"]
    declared = set((document.get("volumes") or {}).keys())
    replicas = {name: svc for name, svc in services.items() if re.fullmatch(r"skillreg-\d+", name)}
    rule(len(replicas) >= 2, f"services: {len(replicas)} skillreg-N replica(s); a replicated deployment has at least 2")

    postgres = services.get("postgres")
    if not isinstance(postgres, dict):
        rule(False, "services/postgres: missing")
    else:
        rule(isinstance(postgres.get("healthcheck"), dict), "services/postgres/healthcheck: missing (replicas wait for it)")
        rule(
            any(str(interpolate(v)).split(":")[0] in declared for v in postgres.get("volumes") or []),
            "services/postgres/volumes: no named volume: the database would die with its container",
        )
        rule(
            "POSTGRES_PASSWORD" not in environment_keys(postgres.get("environment")),
            "services/postgres/environment: sets POSTGRES_PASSWORD: keep the secret in the env_file",
        )

    seen_volumes = {}
    for name, svc in replicas.items():
        where = f"services/{name}"
        rule("build" in svc or "image" in svc, f"{where}: neither build nor image")
        rule(bool(env_files(svc.get("env_file"))), f"{where}/env_file: missing: the admin token and database URL come from .env")
        environment = environment_keys(svc.get("environment"))
        for secret in ("SKILLREG_ADMIN_TOKEN", "SKILLREG_DATABASE_URL"):
            rule(secret not in environment, f"{where}/environment: sets {secret}: keep it in the env_file")
        volume = next((v for v in (mounts_named_volume(e, declared) for e in svc.get("volumes") or []) if v), None)
        rule(volume is not None, f"{where}/volumes: no named volume at {DATA_DIR} (its search index)")
        if volume in seen_volumes:
            rule(False, f"{where}/volumes: {volume!r} is also {seen_volumes[volume]}'s: each replica keeps its own index")
        seen_volumes[volume] = name
        depends = svc.get("depends_on")
        condition = depends.get("postgres", {}).get("condition") if isinstance(depends, dict) else None
        rule(condition == "service_healthy", f"{where}/depends_on: postgres with condition service_healthy")
        healthcheck = svc.get("healthcheck")
        test = healthcheck.get("test") if isinstance(healthcheck, dict) else None
        rule(READY_PATH in " ".join(map(str, test or [])), f"{where}/healthcheck: does not probe {READY_PATH}")
        rule(svc.get("restart") in ("unless-stopped", "always"), f"{where}/restart: should be unless-stopped")

    # A snapshot the replicas start from must be one a service keeps, on a volume they share.
    for name, svc in replicas.items():
        snapshot = environment_keys(svc.get("environment")).get("SKILLREG_INDEX_SNAPSHOT")
        if snapshot is None:
            continue
        folder = str(interpolate(snapshot)).rsplit("/", 1)[0]
        mounts = {str(v).split(":")[1]: str(v).split(":")[0] for v in svc.get("volumes") or [] if ":" in str(v)}
        volume = mounts.get(folder)
        rule(volume in declared, f"services/{name}: SKILLREG_INDEX_SNAPSHOT is not on a named volume mounted at {folder}")
        keepers = [
            other for other, o in services.items()
            if "index-snapshot" in " ".join(map(str, o.get("entrypoint") or [])) + " ".join(map(str, o.get("command") or []))
            and any(str(v).split(":")[:2] == [volume, folder] for v in o.get("volumes") or [])
        ]
        rule(bool(keepers), f"services/{name}: no service runs `skillreg index-snapshot` into {folder} on volume {volume!r}")

    proxy = services.get("haproxy")
    if not isinstance(proxy, dict):
        return problems + ["rule: services/haproxy: missing (the load balancer)"]
    rule(
        any(publishes_container_port(p) for p in proxy.get("ports") or []),
        f"services/haproxy/ports: container port {CONTAINER_PORT} is not published",
    )
    config = next(
        (str(v).split(":")[0] for v in proxy.get("volumes") or [] if str(v).split(":")[1:2] == ["/usr/local/etc/haproxy/haproxy.cfg"]),
        None,
    )
    if config is None:
        return problems + ["rule: services/haproxy/volumes: haproxy.cfg is not mounted"]
    try:
        text = (Path(compose_file).parent / config).read_text(encoding="utf-8")
    except OSError as e:
        return problems + [f"rule: services/haproxy: cannot read {config}: {e}"]
    servers = set(re.findall(r"^\s*server\s+\S+\s+([\w-]+):" + str(CONTAINER_PORT) + r"\b", text, re.M))
    rule(servers == set(replicas), f"{config}: servers {sorted(servers)} differ from the replicas {sorted(replicas)}")
    rule("balance roundrobin" in text, f"{config}: missing `balance roundrobin`")
    rule(
        re.search(r"^\s*option\s+redispatch\b", text, re.M) is not None,
        f"{config}: missing `option redispatch`: a request to a replica that died must be retried on another",
    )
    rule(READY_PATH in text, f"{config}: the health check does not probe {READY_PATH}")
    problems += proxy_trust_rules(services, replicas, proxy, document, config, text)
    return problems


def proxy_trust_rules(services, replicas, proxy, document, config: str, text: str) -> list[str]:
    """Behind HAProxy every client arrives from its address: HAProxy must name the client
    (`option forwardfor`), drop a client's X-Forwarded-Proto, have a fixed address, and every
    replica must trust that address (SKILLREG_TRUSTED_PROXIES) and nothing wider than its
    network."""
    problems = []

    def rule(ok: bool, message: str) -> None:
        if not ok:
            problems.append(f"rule: {message}")

    rule(
        re.search(r"^\s*option\s+forwardfor\b", text, re.M) is not None,
        f"{config}: missing `option forwardfor`: the replicas would count every client as HAProxy",
    )
    rule(
        re.search(r"^\s*http-request\s+(del|set)-header\s+X-Forwarded-Proto\b", text, re.M | re.I) is not None,
        f"{config}: a client's X-Forwarded-Proto is passed on (add `http-request del-header X-Forwarded-Proto`)",
    )
    addresses = []
    networks = proxy.get("networks")
    if isinstance(networks, dict):
        for name, settings in networks.items():
            if isinstance(settings, dict):
                for key in ("ipv4_address", "ipv6_address"):
                    if settings.get(key):
                        addresses.append((name, str(interpolate(settings[key]))))
    rule(bool(addresses), "services/haproxy/networks: no fixed ipv4_address: the replicas cannot name the proxy they trust")
    declared_networks = document.get("networks") or {}
    for name, address in addresses:
        subnets = []
        ipam = (declared_networks.get(name) or {}).get("ipam") if isinstance(declared_networks.get(name), dict) else None
        for entry in (ipam or {}).get("config") or []:
            if isinstance(entry, dict) and entry.get("subnet"):
                subnets.append(str(interpolate(entry["subnet"])))
        try:
            ip = ipaddress.ip_address(address)
            inside = any(ip in ipaddress.ip_network(subnet, strict=False) for subnet in subnets)
        except ValueError:
            inside = False
        rule(inside, f"services/haproxy/networks/{name}: {address} is not in a subnet declared under networks/{name}/ipam")
    for name, svc in replicas.items():
        trusted = str(interpolate(environment_keys(svc.get("environment")).get("SKILLREG_TRUSTED_PROXIES") or ""))
        try:
            nets = [ipaddress.ip_network(t.strip(), strict=False) for t in trusted.split(",") if t.strip()]
        except ValueError:
            rule(False, f"services/{name}/environment: SKILLREG_TRUSTED_PROXIES {trusted!r} is not a list of addresses")
            continue
        rule(bool(nets), f"services/{name}/environment: SKILLREG_TRUSTED_PROXIES missing: HAProxy's X-Forwarded-For is not believed")
        for _, address in addresses:
            rule(
                any(ipaddress.ip_address(address) in n for n in nets) if nets else True,
                f"services/{name}/environment: SKILLREG_TRUSTED_PROXIES does not name HAProxy's {address}",
            )
        rule(
            all(n.num_addresses <= 16 for n in nets),
            f"services/{name}/environment: SKILLREG_TRUSTED_PROXIES {trusted!r} trusts more than the proxy: any container could name any client",
        )
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("compose_file", nargs="?")
    parser.add_argument("--replicas", action="store_true", help="the PostgreSQL + replicas rules")
    parser.add_argument("--schema", default=os.environ.get("SKILLREG_COMPOSE_SCHEMA"))
    args = parser.parse_args()
    if args.compose_file is None:
        default = "deploy/replicas/compose.yml" if args.replicas else "docker-compose.yml"
        args.compose_file = str(REPO / default)

    if not args.schema:
        die(
            "no Compose Specification schema: run scripts/install-test-tools.sh and "
            'source "${SKILLREG_TOOLS:-.tools}/env.sh" (SKILLREG_COMPOSE_SCHEMA), or pass --schema'
        )
    try:
        schema = json.loads(Path(args.schema).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        die(f"cannot read the schema {args.schema}: {e}")
    try:
        with open(args.compose_file, encoding="utf-8") as stream:
            document = yaml.load(stream, Loader=StrictLoader)
    except OSError as e:
        die(f"cannot read {args.compose_file}: {e}")
    except yaml.YAMLError as e:
        print(f"check-compose: FAIL {args.compose_file}: not valid YAML:\n{e}", file=sys.stderr)
        return 1

    problems = schema_errors(document, schema)
    problems += replica_rules(document, args.compose_file) if args.replicas else rule_errors(document)
    if problems:
        print(f"check-compose: FAIL {args.compose_file}: {len(problems)} problem(s)", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(
        f"check-compose: ok {args.compose_file} "
        f"(schema {schema.get('title')!r} from {args.schema}; "
        + ("project rules for PostgreSQL, replicas and HAProxy)" if args.replicas else f"project rules for service {SERVICE!r})")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
