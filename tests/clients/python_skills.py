"""Lists the skills of `notes serve` with the official Python SDK (`mcp` on
PyPI), which has no skills helper: `skills/list` and `skills/get` go through
the SDK's session as extension requests, each skill file through
`read_resource`, and the script checks nothing itself — it prints what it
observed (the capability, the entries, each file's text and its sha256 and
size as Python computes them) as one JSON object on stdout for the Rust test
(tests/tests/mcp/notes_skills.rs) to judge.

usage: python_skills.py MODE URL     (MODE: auto = 2026-07-28, legacy = 2025)
"""

import hashlib
import json
import sys
import warnings
from typing import Any, Literal

import anyio
from mcp import Client
from mcp_types import PaginatedRequest, PaginatedRequestParams, Request, RequestParams
from pydantic import TypeAdapter

warnings.simplefilter("ignore")

EXTENSION = "io.modelcontextprotocol/skills"


class ListSkills(PaginatedRequest[Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"


class GetSkillParams(RequestParams):
    uri: str


class GetSkill(Request[GetSkillParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"


ANY = TypeAdapter(dict[str, Any])


async def scenario(mode, url):
    report = {}
    async with Client(url, mode=mode, cache=None) as client:
        report["protocol_version"] = client.protocol_version
        capabilities = client.server_capabilities
        report["extension"] = (capabilities.extensions or {}).get(EXTENSION)
        session = client.session
        listed = await session.send_request(ListSkills(params=PaginatedRequestParams()), ANY)
        report["list"] = listed
        skills = listed["skills"]
        report["get"] = await session.send_request(
            GetSkill(params=GetSkillParams(uri=skills[0]["uri"])), ANY
        )
        files = []
        for resource in skills[0]["resources"]:
            read = await client.read_resource(resource["uri"])
            content = read.contents[0]
            data = content.text.encode("utf-8")
            files.append(
                {
                    "uri": resource["uri"],
                    "mimeType": content.mime_type,
                    "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                    "size": len(data),
                    "text": content.text,
                }
            )
        report["files"] = files
        report["resources"] = [
            r.model_dump(mode="json", by_alias=True, exclude_none=True)
            for r in (await client.list_resources()).resources
        ]
        try:
            await session.send_request(
                GetSkill(params=GetSkillParams(uri="skill://no-such-skill/SKILL.md")), ANY
            )
            report["get_missing"] = "no error"
        except Exception as error:
            report["get_missing"] = {"type": type(error).__name__, "text": str(error)}
    print(json.dumps(report))


if __name__ == "__main__":
    anyio.run(scenario, sys.argv[1], sys.argv[2])
