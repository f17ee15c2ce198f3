"""Typed-value detectors (pure): each type finds the values documentation writes, as spans."""

from __future__ import annotations

import pytest

from app.answer.values import find_values, identifier_words, split_identifier


@pytest.mark.parametrize(
    ("kind", "text", "values"),
    [
        ("api_version", "apiVersion: kueue.x-k8s.io/v1beta2", ["kueue.x-k8s.io/v1beta2"]),
        ("api_version", "apiVersion: v1", ["v1"]),
        (
            "flag",
            "srun --container-image=ubuntu --container-mount-home -N2",
            ["--container-image=ubuntu", "--container-mount-home"],
        ),
        ("flag", "slurmd -C", ["-C"]),
        ("key", "export ENROOT_RUNTIME_PATH=/run/enroot", ["ENROOT_RUNTIME_PATH=/run/enroot"]),
        ("key", "  topologyName: default", ["topologyName"]),
        ("key", "GresTypes=gpu,shard", ["GresTypes=gpu,shard"]),
        ("key", "the annotation kai.scheduler/topology selects it", ["kai.scheduler/topology"]),
        ("version", "requires Helm 3.14+ and the v0.8.2 release", ["3.14+", "v0.8.2"]),
        ("quantity", "a maximum of 16 nodes and 80–95% utilisation", ["maximum of 16 nodes", "80–95%"]),
        # an approximate Japanese quantity keeps its unit
        ("quantity", "数百 MB 程度、数十万台規模", ["数百 MB", "数十万台"]),
        ("quantity", "最大3層まで", ["3層"]),
        # a number in words, with its digits in brackets, or joined to its unit as one modifier
        ("quantity", "kept for roughly fourteen (14) months", ["fourteen (14) months"]),
        ("quantity", "during the two-month grace period, a 12-month window", ["two-month", "12-month"]),
        ("date", "released 2026/03; founded in 2003年", ["2026/03", "2003年"]),
        ("default", "The default is 30s.", ["30s"]),
        ("default", "disabled by default", ["disabled"]),
        ("name", "pods named `volcano-scheduler` run in volcano-system", ["volcano-scheduler", "volcano-system"]),
    ],
)
def test_values_of_each_type(kind: str, text: str, values: list[str]) -> None:
    assert [s.text for s in find_values(kind, text)] == values


def test_a_command_is_a_shell_line_or_a_code_span() -> None:
    assert [s.text for s in find_values("command", "$ enroot import docker://ubuntu", code_lang="bash")] == [
        "enroot import docker://ubuntu"
    ]
    assert find_values("command", "apiVersion: v1", code_lang="yaml") == []
    assert [s.text for s in find_values("command", "Run `helm install kai ./chart` first.")] == [
        "helm install kai ./chart"
    ]


def test_spans_point_into_the_text() -> None:
    text = "set `--container-workdir=/work` to change it"
    for span in find_values("flag", text):
        assert text[span.start : span.end] == span.text


def test_identifiers_split_into_words() -> None:
    assert split_identifier("parentQueue") == ["parent", "queue"]
    assert split_identifier("ENROOT_DATA_PATH") == ["enroot", "data", "path"]
    assert "rack" in identifier_words("nodeLabel: cloud.example.com/topology-rack")
    assert split_identifier("") == []


def test_a_link_address_in_prose_is_not_a_value_but_a_command_url_and_a_release_are() -> None:
    prose = "[Enroot](https://github.com/NVIDIA/enroot) reads /etc/enroot/enroot.conf; see <https://a.io/x/y>."
    assert [s.text for s in find_values("path", prose)] == ["/etc/enroot/enroot.conf"]
    assert find_values("key", "[guide](https://example.com/docs/a_b_c?x=y)") == []
    pinned = (
        "kubectl apply --server-side -f https://raw.githubusercontent.com/kubeflow/mpi-operator/v0.8.2/deploy/x.yaml"
    )
    assert "v0.8.2" in [s.text for s in find_values("version", pinned, code_lang="shell")]
    assert "v0.8.2" in [s.text for s in find_values("version", f"Download [it]({pinned.split()[-1]})")]


def test_in_a_transcript_only_prompt_lines_are_commands() -> None:
    assert [s.text for s in find_values("command", "$ srun --mpi=list", code_lang="console")] == ["srun --mpi=list"]
    assert find_values("command", "specific pmix plugin versions available: pmix_v3", code_lang="console") == []
    assert [s.text for s in find_values("command", "srun --mpi=list", code_lang="shell")] == ["srun --mpi=list"]


def test_a_digit_inside_a_name_is_not_a_quantity() -> None:
    assert find_values("quantity", "kueue.x-k8s.io/podset-required-topology") == []
    assert find_values("quantity", "GPU 0: NVIDIA A100-PCIE-40GB (UUID: GPU-...)") == []
    assert [s.text for s in find_values("quantity", "takes 30s, 年2回, 40GB of memory")] == ["30s", "年2回", "40GB"]
