"""The deployment files, checked offline: compose.yaml against the Compose Specification's JSON
schema (tests/fixtures/compose_spec.json, Apache-2.0, as shipped by Compose 1.29.2), the systemd
unit with `systemd-analyze verify`, and the Dockerfile's promises (multi-stage, a base image
argument defaulting to the official python image, non-root, a volume, a health check).
`make test-image` builds and runs the image itself."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = Path(__file__).parent / "fixtures" / "compose_spec.json"
VALIDATOR = jsonschema.Draft201909Validator(json.loads(SCHEMA.read_text()))


def _compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_file_follows_the_compose_specification():
    VALIDATOR.validate(_compose())


def test_compose_file_serves_citebot_with_redis_and_keeps_data_on_volumes():
    compose = _compose()
    services, volumes = compose["services"], set(compose["volumes"])
    citebot = services["citebot"]
    assert citebot["environment"]["CITEBOT_REDIS_URL"].startswith("redis://redis:")
    assert "redis" in services and "redis" in citebot["depends_on"]
    assert any(v.split(":")[1] == "/data" for v in citebot["volumes"])  # the image's VOLUME
    for service in services.values():  # every named volume is declared
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            assert source.startswith(".") or source in volumes, source
    assert services["s3"]["profiles"] == ["s3"]  # optional


def test_a_broken_compose_file_is_refused():
    broken = _compose()
    broken["services"]["citebot"]["ports"] = "3000"  # a string where a list belongs
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(broken)


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_unit_verifies(tmp_path):
    unit = (ROOT / "deploy" / "citebot.service").read_text()
    # The virtualenv does not exist here: point ExecStart at a program that does.
    unit = re.sub(r"^ExecStart=\S+", f"ExecStart={shutil.which('true')}", unit, flags=re.M)
    (tmp_path / "citebot.service").write_text(unit)
    done = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "citebot.service")],
                          capture_output=True, text=True, timeout=60)
    problems = [line for line in (done.stdout + done.stderr).splitlines()
                if "citebot.service" in line]
    assert done.returncode == 0 and not problems, done.stdout + done.stderr


def test_dockerfile_is_multi_stage_non_root_with_a_volume_and_a_health_check():
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE_IMAGE=python:3\.\d+", text, re.M)
    assert len(re.findall(r"^FROM \$\{BASE_IMAGE\}", text, re.M)) == 2
    assert "--require-hashes" in text and "requirements.lock" in text
    assert re.search(r"^USER (?!root)\w+", text, re.M)
    assert re.search(r'^VOLUME \["/data"\]', text, re.M)
    assert re.search(r"^HEALTHCHECK .*healthz", text, re.M)
    assert re.search(r'^ENTRYPOINT \["citebot"\]', text, re.M) and 'CMD ["serve"]' in text


def test_the_image_carries_an_sbom_made_by_a_tool_pinned_with_hashes():
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"pip install --require-hashes --no-deps -r sbom-tool\.lock", text)
    assert re.search(r"cyclonedx-py environment /opt/citebot/bin/python .*\n?.*-o /opt/citebot/sbom\.cdx\.json", text)
    assert "COPY --from=build /opt/citebot /opt/citebot" in text  # so the SBOM ships in the image
    pins = [line for line in (ROOT / "deploy" / "sbom-tool.lock").read_text().splitlines()
            if line and not line.startswith(("#", " "))]
    assert any(pin.startswith("cyclonedx-bom==") for pin in pins)
    lock = (ROOT / "deploy" / "sbom-tool.lock").read_text()
    assert all(re.match(r"^[a-z0-9._-]+==[^ ]+ \\$", pin, re.I) for pin in pins), "every package pinned"
    assert lock.count("--hash=sha256:") >= len(pins), "and each with its hashes"
