"""The one error type the web routes raise: an HTTP status and a sentence for the page."""


class WebError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


__all__ = ["WebError"]
