"""Optional server-side speech: each roll's summary spoken through espeak-ng, offline.

For a speaker at the table. One utterance at a time on a worker thread; while one is being
spoken, newer rolls replace the waiting one so the speaker never falls behind the table.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading

from dicecam.mechanics.errors import DicecamError

from .events import ROLL_EVENTS, Event

log = logging.getLogger("dicecam.server.speech")

class SpeechUnavailable(DicecamError):
    """espeak-ng is not installed."""


def summary_text(event: Event) -> str | None:
    if event.type not in ROLL_EVENTS:
        return None
    roll = event.data
    text = (roll.adjudication.summary if roll.adjudication else None) or roll.reason
    if not text:
        return None
    return ("Corrected. " if event.type == "roll.amended" else "") + str(text)


class Speaker:
    def __init__(self, rate_wpm: int = 170, voice: str | None = None, command: str = "espeak-ng",
                 extra_args: tuple[str, ...] = ()):
        exe = shutil.which(command)
        if exe is None:
            raise SpeechUnavailable(
                f"--speak needs {command}, which is not installed (Debian/Ubuntu: sudo apt-get install espeak-ng)"
            )
        self.exe, self.rate, self.voice = exe, int(rate_wpm), voice
        self.extra_args = tuple(extra_args)  # e.g. ("-w", "out.wav") to write a file instead of playing
        self._pending: str | None = None
        self._cv = threading.Condition()
        self._closed = False
        self.spoken = 0
        self._thread = threading.Thread(target=self._run, name="dicecam-speech", daemon=True)
        self._thread.start()

    def argv(self, text: str) -> list[str]:
        args = [self.exe, "-s", str(self.rate)]
        if self.voice:
            args += ["-v", self.voice]
        # "--" so a summary can never be read as an option.
        return args + list(self.extra_args) + ["--", text[:1000]]

    def __call__(self, event: Event) -> None:
        text = summary_text(event)
        if text:
            self.say(text)

    def say(self, text: str) -> None:
        with self._cv:
            self._pending = text
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while self._pending is None and not self._closed:
                    self._cv.wait()
                if self._closed:
                    return
                text, self._pending = self._pending, None
            try:
                subprocess.run(self.argv(text), timeout=60, check=False,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                self.spoken += 1
            except (OSError, subprocess.TimeoutExpired) as e:
                log.warning("espeak-ng failed: %s", e)

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify()
        self._thread.join(2.0)
