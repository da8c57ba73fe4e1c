"""Import paths kept for LEAPP programs (``leapp.utils.enums`` -> ``patchport.utils.enums``)."""
