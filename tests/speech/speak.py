"""Speaks its stdin into a WAV file with eSpeak NG, as an earbud's text-to-speech would: the
library and voices of PyPI's espeakng-loader (no espeak-ng installed on the machine).

Usage: echo "text" | python3 speak.py OUT.wav   (a command for `aura live --on EARBUD_TTS=…`)
"""

import ctypes
import sys
import wave

import espeakng_loader

AUDIO_OUTPUT_SYNCHRONOUS = 2
POS_CHARACTER = 1
CHARS_UTF8 = 1

library = ctypes.CDLL(espeakng_loader.get_library_path())
library.espeak_Initialize.restype = ctypes.c_int
library.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
rate = library.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, espeakng_loader.get_data_path().encode(), 0)
if rate <= 0:
    sys.exit(f"espeak_Initialize failed ({rate})")
chunks = []
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


@CALLBACK
def collect(samples, count, events):
    if count > 0:
        chunks.append(ctypes.string_at(samples, count * 2))
    return 0


library.espeak_SetSynthCallback(collect)
if library.espeak_SetVoiceByName(b"en") != 0:
    sys.exit("no English voice")
text = sys.stdin.read().strip().encode()
if not text:
    sys.exit("nothing to say")
library.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
                                 ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
status = library.espeak_Synth(text, len(text) + 1, 0, POS_CHARACTER, 0, CHARS_UTF8, None, None)
library.espeak_Synchronize()
if status != 0:
    sys.exit(f"espeak_Synth failed ({status})")
with wave.open(sys.argv[1], "wb") as out:
    out.setnchannels(1)
    out.setsampwidth(2)
    out.setframerate(rate)
    out.writeframes(b"".join(chunks))
