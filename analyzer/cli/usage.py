"""The error of a user's mistake on the command line (an option, a path, an environment variable): exit 2."""

from analyzer.errors import TriageError


class UsageError(TriageError):
    """A bad option value, output path or environment variable; the message, meant for the user, names it."""
