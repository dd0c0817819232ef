"""kvgen's pod emulator (tests/test_emulator.py): start rendered pods the way a kubelet would."""
