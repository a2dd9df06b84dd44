"""``build_data_docs: {base_url: ...}`` is pasted into every alert's links: a URL that could
close an HTML attribute or open a tag is refused when the checkpoint is validated (issue 18,
item 16), with the other malformed URLs; good URLs are kept exactly."""

from __future__ import annotations

import pytest
from support.toyproject import CHECKPOINT, make_toy

from er_expectations.cli.common import EXIT_USAGE
from er_expectations.cli.main import main
from er_expectations.config import ConfigError, load_checkpoint


def checkpoint(tmp_path, url: str):
    text = CHECKPOINT.replace("  - build_data_docs\n", "  - build_data_docs: {base_url: " + url + "}\n")
    return make_toy(tmp_path, checkpoint=text)


@pytest.mark.parametrize("url", ['\'https://x.example/"><script>alert(1)</script>\'',
                                 "'https://x.example/a<b'", "'https://x.example/`x`'",
                                 "'https://x.example/{a}'", "'https://x.example/a\\\\b'", "'https:///path'"])
def test_a_url_with_markup_or_no_host_is_refused_at_validation(tmp_path, capsys, url):
    path = checkpoint(tmp_path, url)
    code = main(["validate", str(path)])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert "build_data_docs.base_url: expected an http(s) or file URL" in err
    assert "<script>" not in err.split("got", 1)[0]


@pytest.mark.parametrize("url", ["https://docs.example.org/er/", "https://docs.example.org/er%20docs/?a=1&b=2#top",
                                 "file:///srv/er-docs/", "http://localhost:8080/"])
def test_good_urls_are_kept(tmp_path, url):
    path = checkpoint(tmp_path, f'"{url}"')
    action = next(a for a in load_checkpoint(path).actions if "build_data_docs" in str(a))
    assert url in str(action)


def test_the_message_does_not_echo_the_markup(tmp_path):
    path = checkpoint(tmp_path, '\'https://x.example/"><script>\'')
    with pytest.raises(ConfigError) as caught:
        load_checkpoint(path)
    assert "characters a URL holds only percent-encoded" in str(caught.value)
