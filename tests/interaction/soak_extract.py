"""Soak run for the web reader, in a process of its own (so a crash is a failed test, not a dead pytest).

``python soak_extract.py ORIGIN CA_FILE COUNT PAGE...`` reads ``COUNT`` pages from
``ORIGIN`` over HTTPS, two at a time, cycling through ``PAGE``s, and prints one JSON
line: reads done, errors, this process's and the extraction child's resident memory
after a warm-up and at the end, whether the child was ever replaced, and whether
trafilatura (the parser that must never run in this process) got imported here.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from ditto.worker.interaction import WebClient, WebOptions
from ditto.worker.interaction.config import DEFAULT_EXTRACT_MEMORY_BYTES
from ditto.worker.interaction.extractor import shared_extractor

WARM_UP = 20


def rss_kib(pid: int | str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def main(origin: str, ca_file: str, count: int, pages: list[str]) -> dict[str, object]:
    options = WebOptions(allowed_origins=[origin], ca_file=ca_file)
    extractor = shared_extractor(DEFAULT_EXTRACT_MEMORY_BYTES)
    done, errors, children = 0, [], set()
    before: dict[str, int] = {}
    started = time.monotonic()
    async with WebClient(options) as client:
        for index in range(0, count, 2):
            urls = [f"{origin}/{pages[(index + offset) % len(pages)]}" for offset in range(min(2, count - index))]
            results = await asyncio.gather(*(client.read({"url": url}) for url in urls), return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException):
                    errors.append(repr(result)[:200])
                elif not result.text:
                    errors.append(f"no text from {result.url}")
                else:
                    done += 1
            if extractor.pid is not None:
                children.add(extractor.pid)
            if index + 2 == WARM_UP and extractor.pid is not None:
                before = {"self": rss_kib("self"), "child": rss_kib(extractor.pid)}
        after = {"self": rss_kib("self"), "child": rss_kib(extractor.pid) if extractor.pid else 0}
    return {"done": done, "errors": errors[:5], "error_count": len(errors), "children": len(children),
            "rss_before_kib": before, "rss_after_kib": after, "seconds": round(time.monotonic() - started, 2),
            "trafilatura_loaded_here": "trafilatura" in sys.modules}


if __name__ == "__main__":
    origin_arg, ca_arg, count_arg, *page_args = sys.argv[1:]
    print(json.dumps(asyncio.run(main(origin_arg, ca_arg, int(count_arg), page_args))))
