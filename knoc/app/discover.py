"""`knoc discover`: which public agents qualify for a request, answered
from the catalog a build would publish (compiled in memory, never a stale
build/)."""

from __future__ import annotations

import difflib
import json

from knoc.app.common import compile_cached
from knoc.app.outcome import Outcome, UsageError
from knoc.config import Config
from knoc.features import discover as discovery
from knoc.features.discover import Request
from knoc.output.tree import DOMAINS


def discover(config: Config, request: Request, *, fmt: str, use_cache: bool) -> Outcome:
    problems = request.problems()
    if problems:
        raise UsageError("KNO-CONFIG", "; ".join(m for m, _ in problems), problems[0][1])
    result = compile_cached(config, use_cache)
    if not result.ok:
        return Outcome("knoc discover", result.report.sorted(), result.inputs, "no catalog: fix the errors first")
    domains = sorted(json.loads(result.files[DOMAINS])["domains"])
    if request.domain is not None and request.domain not in domains:
        near = difflib.get_close_matches(request.domain, domains, n=1)
        raise UsageError("KNO-CONFIG", f"no perception domain `{request.domain}` in this repo",
                         (f"did you mean `{near[0]}`? " if near else "") + f"domains: {', '.join(domains) or 'none'}")
    answers = discovery.discover(discovery.catalog(result.files.__getitem__), request, config.a2a)
    if fmt == "json":
        answer = json.dumps({"request": request._asdict(), "agents": [a.to_dict() for a in answers]},
                            indent=2, ensure_ascii=False) + "\n"
    else:
        answer = discovery.text(answers, request)
    return Outcome("knoc discover", answer=answer, failed=not any(a.qualifies for a in answers))
