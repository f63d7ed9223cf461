"""Plan files by hand for the lit tests, without protobuf.

  plan_file.py seal PLAN OUT     wraps the bare Plan bytes PLAN in a PlanFile
                                 (proto/plan.proto: format version 2, the
                                 Plan's length and FNV-1a checksum)
  plan_file.py flip FILE OUT N   FILE with byte N from the end xor 1
"""
import sys


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def seal(plan):
    return (b"\x08" + varint(2) + b"\x40" + varint(len(plan)) + b"\x49" +
            fnv1a64(plan).to_bytes(8, "little") + b"\x52" + varint(len(plan)) + plan)


def main():
    command, source, target = sys.argv[1:4]
    with open(source, "rb") as f:
        data = bytearray(f.read())
    if command == "seal":
        data = seal(bytes(data))
    elif command == "flip":
        data[-int(sys.argv[4])] ^= 1
    else:
        sys.exit(f"unknown command {command}")
    with open(target, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
