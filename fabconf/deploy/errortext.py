"""One line for a device error, as reports show it."""

from __future__ import annotations


def explain(exc: BaseException) -> str:
    """The error and, where a library re-raised it as a bare "Cannot connect to X" (napalm's NX-OS driver, its SCP
    included), the error underneath; a certificate that is not trusted says what to do about it."""
    text = str(exc).strip() or type(exc).__name__
    inner = exc.__cause__ or exc.__context__
    if inner is not None and str(inner).strip() and str(inner).strip() not in text:
        text += f" ({type(inner).__name__}: {str(inner).strip()[:300]})"
    if "CERTIFICATE_VERIFY_FAILED" in text and "ca_file" not in text:
        text += "; trust the device's CA (connection_options extras ca_file, or FABCONF_CA_FILE) or use --insecure"
    return text
