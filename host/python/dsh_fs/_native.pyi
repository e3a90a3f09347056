from typing import List, Optional, Tuple

class Session:
    def __init__(
        self,
        root: Optional[str],
        store: Optional[str],
        endpoint: Optional[str],
        region: Optional[str],
        policy: bool,
        journal_bytes: int = ...,
    ) -> None: ...
    def execute(self, tool: str, arguments: str) -> Tuple[str, bool, Optional[str], Optional[str]]: ...

def definitions(extra: list[str] = ...) -> str: ...
def main(argv: List[str]) -> int: ...
