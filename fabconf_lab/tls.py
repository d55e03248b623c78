"""A lab certificate authority: one CA, one server certificate per lab device.

Clients verify lab devices by trusting ``STATE/tls/ca.pem``; every device certificate carries its lab
address as an IP SAN and its inventory name as a DNS SAN.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import threading
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from fabconf.private import private_dir, write_private

_VALIDITY = dt.timedelta(days=365)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    write_private(path, pem)  # 0600 from its creation, never through a symlink


class LabCA:
    """Creates (once) and then reuses a CA under ``directory``; issues server certificates on demand."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        private_dir(self.directory)  # 0700: the CA's key is in it
        self.ca_cert_path = self.directory / "ca.pem"
        self._lock = threading.Lock()
        ca_key_path = self.directory / "ca.key"
        if self.ca_cert_path.exists() and ca_key_path.exists():
            self._key = serialization.load_pem_private_key(ca_key_path.read_bytes(), None)
            self._cert = x509.load_pem_x509_certificate(self.ca_cert_path.read_bytes())
            return
        self._key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fabconf lab CA")])
        now = dt.datetime.now(dt.UTC)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self._key, hashes.SHA256())
        )
        _write_key(ca_key_path, self._key)
        write_private(self.ca_cert_path, self._cert.public_bytes(serialization.Encoding.PEM), 0o644)

    def issue(self, name: str, address: str) -> tuple[Path, Path]:
        """Return (cert.pem, key.pem) for a device, creating them if missing."""
        # keyed by name AND address: a device moved to another lab address needs a new IP SAN
        cert_path = self.directory / f"{name}@{address}.pem"
        key_path = self.directory / f"{name}@{address}.key"
        with self._lock:
            if cert_path.exists() and key_path.exists():
                return cert_path, key_path
            key = ec.generate_private_key(ec.SECP256R1())
            now = dt.datetime.now(dt.UTC)
            cert = (
                x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                .issuer_name(self._cert.subject)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(minutes=5))
                .not_valid_after(now + _VALIDITY)
                .add_extension(
                    x509.SubjectAlternativeName([x509.DNSName(name), x509.IPAddress(ipaddress.ip_address(address))]),
                    critical=False,
                )
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .add_extension(
                    x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), critical=False
                )
                .sign(self._key, hashes.SHA256())
            )
            _write_key(key_path, key)
            write_private(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)
            return cert_path, key_path

    def server_context(self, name: str, address: str) -> ssl.SSLContext:
        cert_path, key_path = self.issue(name, address)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert_path, key_path)
        return ctx

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_cert_path))
