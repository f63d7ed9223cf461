"""The exceptions of the Python front end."""


class CoopError(Exception):
    """Base of the front end's errors."""


class CompileError(CoopError):
    """A tool of the compile pipeline failed; `tool` names it and the
    message is the tool's own."""

    def __init__(self, tool, message):
        super().__init__(f"{tool}: {message}")
        self.tool = tool
        self.message = message


class SessionError(CoopError):
    """The runtime refused a call; `code` is its coop_status_code_t name
    (INVALID_ARGUMENT, ...) and the message is the runtime's own."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
