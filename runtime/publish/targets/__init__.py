"""The publishers, one per family of targets; ``base`` says what each does."""
