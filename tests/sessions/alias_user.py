"""A user module that captured cv2.cvtColor with a from-import before any session."""

from cv2 import COLOR_BGR2RGB, cvtColor


def to_rgb(bgr):
    return cvtColor(bgr, COLOR_BGR2RGB)
