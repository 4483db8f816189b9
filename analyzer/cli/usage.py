"""The error of a user's mistake on the command line (an option, a path, an environment variable): exit 2."""


class UsageError(Exception):
    """A bad option value, output path or environment variable; the message, meant for the user, names it."""
