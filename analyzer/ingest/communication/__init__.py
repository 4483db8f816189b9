"""communication.json and communication_matrix.json -> comm_ops."""
