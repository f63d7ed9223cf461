"""Exports a PyTorch training step as a coop TrainingGraph protobuf."""
from .exporter import SGD, Adam, AdamW, export
from .graph_builder import ExportError

__all__ = ["Adam", "AdamW", "ExportError", "SGD", "export"]
