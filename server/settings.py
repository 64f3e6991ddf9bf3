"""The server's settings: one validated object built by `dicecam serve` or by a test."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dicecam.vision.images import MAX_BYTES, MAX_PIXELS
from dicecam.vision.teach import default_data_dir  # one data folder for every command

LOOPBACK_NAMES = {"localhost", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class ServerSettings(BaseModel):
    """Everything the web app needs to know; no I/O happens here."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(default="127.0.0.1", min_length=1, max_length=255, title="Address to listen on")
    port: int = Field(default=8000, ge=0, le=65535, title="TCP port")
    data_dir: Path = Field(default_factory=default_data_dir, title="Folder for the roll store and corrections")
    allowed_hosts: list[str] = Field(default_factory=list, max_length=64,
                                     title="Host names the server answers to besides its own address")
    token: str | None = Field(default=None, min_length=8, max_length=256, title="Bearer token for write endpoints")
    system: str = Field(default="contingency", min_length=1, max_length=64, title="System at start")
    options: dict[str, Any] = Field(default_factory=dict, title="System options at start")
    systems: list[str] = Field(default_factory=list, max_length=16, title="Systems offered on the page (empty: all)")
    webhook_url: str | None = Field(default=None, max_length=2048, title="Outbound webhook URL")
    webhook_format: Literal["json", "discord"] = Field(default="json", title="Webhook body format")
    webhook_timeout_s: float = Field(default=5.0, gt=0, le=60, title="Webhook request timeout")
    speak: bool = Field(default=False, title="Speak each summary through espeak-ng")
    max_upload_bytes: int = Field(default=MAX_BYTES, ge=1024, le=200_000_000, title="Largest upload accepted")
    max_upload_pixels: int = Field(default=MAX_PIXELS, ge=1, le=400_000_000, title="Largest image accepted (w*h)")
    page_max: int = Field(default=200, ge=1, le=10_000, title="Most rolls one history page returns")
    snapshot_rolls: int = Field(default=20, ge=0, le=500, title="Recent rolls sent in a snapshot")
    client_queue: int = Field(default=256, ge=4, le=100_000, title="Events buffered per client before it is dropped")
    max_clients: int = Field(default=500, ge=1, le=100_000, title="Most event clients at once")
    video_fps: float = Field(default=10.0, gt=0, le=60, title="MJPEG frames per second")
    memory_dir: Path | None = Field(default=None, title="Folder of the table's dice memory (default: the data folder's memory/)")
    use_memory: bool = Field(default=True, title="Read with the table's dice memory and learn from corrections")
    max_memory_bytes: int = Field(default=300_000_000, ge=1024, le=2_000_000_000, title="Largest memory file imported")
    frame_cache: int = Field(default=32, ge=0, le=1000, title="Recent roll frames kept in memory for corrections")
    frames_kept: int = Field(default=500, ge=0, le=100_000,
                             title="Roll pictures kept in the roll store, the oldest dropped first (0: none; rolls always stay)")

    @model_validator(mode="after")
    def _token_off_loopback(self) -> "ServerSettings":
        # Anyone on the network could otherwise change the system or rewrite the table's rolls.
        if not self.loopback and self.token is None:
            raise ValueError(f"listening on {self.host} (not loopback) needs a token for write endpoints")
        return self

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def token_required(self) -> bool:
        """Writes need the token whenever one is set; the serve command sets one off loopback."""
        return self.token is not None

    @property
    def db_path(self) -> Path:
        return self.data_dir / "rolls.sqlite3"

    @property
    def memory_folder(self) -> Path:
        return self.memory_dir or self.data_dir / "memory"

    @property
    def corrections_dir(self) -> Path:
        return self.data_dir / "corrections"
