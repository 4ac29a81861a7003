def add(a, b):
    return a + b


def get_inputs():
    return [1, 2]


def get_init_inputs():
    return []
